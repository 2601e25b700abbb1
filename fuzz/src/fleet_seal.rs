//! Fleet documents as a peer (or anyone with NATS publish rights) hands them over: the seal's
//! reader (`bardo_cluster::fuzzing::open`) on arbitrary payloads, and on sealed documents the
//! fuzzer then edits. Oracles: sealed then opened at its place is the document again (a
//! deletion: none); at another sequence or subject it is refused; so is every edit of a sealed
//! payload; bytes nobody sealed never open.

use arbitrary::{Arbitrary, Unstructured};
use bardo_cluster::fuzzing::{open, seal};
use bardo_safety::host_key::HostKey;
use std::sync::OnceLock;

#[derive(Debug, Arbitrary)]
struct Case {
    doc: Vec<u8>,
    seq: u64,
    subject: String,
    flip: Option<(u16, u8)>,
    raw: Vec<u8>,
}

fn key() -> &'static HostKey {
    static KEY: OnceLock<HostKey> = OnceLock::new();
    KEY.get_or_init(HostKey::ephemeral)
}

/// One input; panics when an oracle fails.
pub fn run(data: &[u8]) {
    let Ok(case) = Unstructured::new(data).arbitrary::<Case>() else { return };
    let key = key();
    // Bytes nobody sealed.
    assert!(open(key, "doc", &case.subject, case.seq, &case.raw).is_err(), "an unsealed payload opened");
    let sealed = seal(key, &case.subject, case.seq, &case.doc);
    let expected = (!case.doc.is_empty()).then(|| case.doc.clone());
    assert_eq!(open(key, "doc", &case.subject, case.seq, &sealed), Ok(expected.clone()), "round trip");
    assert!(
        open(key, "doc", &case.subject, case.seq.wrapping_add(1), &sealed).is_err(),
        "written back elsewhere"
    );
    let other = format!("{}.other", case.subject);
    assert!(open(key, "doc", &other, case.seq, &sealed).is_err(), "another document's seal");
    if let Some((at, bit)) = case.flip {
        let mut edited = sealed.clone();
        let at = at as usize % edited.len();
        edited[at] ^= 1 << (bit % 8);
        assert!(open(key, "doc", &case.subject, case.seq, &edited).is_err(), "an edited payload opened");
    }
}
