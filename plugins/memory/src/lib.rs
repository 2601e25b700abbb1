//! Memory tools for Bardo (category `memory`, the `learning` profile): the Grimoire's episodes,
//! reflections and insights, kept and searched by the host (`bardo:host/memory`), which grants
//! that interface to a plugin made only of memory tools when memory is on. Every answer is what
//! agents wrote or the write path recorded: the host shows it to agents as untrusted text, and
//! its safety chain never reads it.

mod tools;

bardo_sdk::plugin! {
    name: "memory",
    read: [
        tools::StoreEpisode,
        tools::SearchEpisodes,
        tools::GetEpisode,
        tools::ReflectOutcome,
        tools::GetInsights,
        tools::AddInsight,
        tools::ForgetEpisodes,
        tools::ExportEpisodes,
        tools::ImportEpisodes,
        tools::GetStatus,
    ],
    write: [],
}
