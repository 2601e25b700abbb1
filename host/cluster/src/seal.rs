//! Every state document carries the fleet's seal: a MAC under the key every host of the fleet
//! holds, over the document's subject, the stream sequence it was written at, and its bytes.
//! NATS publish rights alone then change nothing a host believes: a message without the seal
//! (an empty one that would read as "deleted", a `{}` that would reset a ledger) is refused as
//! tampered, and a sealed document copied back later (an older ledger, a permit still open)
//! lands at another sequence than the one it was sealed for, and is refused too.
//!
//! A write publishes at the state's expected last sequence `v`, so its message lands at exactly
//! `v + 1`: the sequence is known before the publish and sealed with the document.

/// Computes and checks the fleet's MACs (the write path's host key implements it).
pub trait Sealer: Send + Sync + 'static {
    /// The MAC of `message`.
    fn mac(&self, message: &[u8]) -> [u8; 32];
    /// Whether `tag` is the MAC of `message`, compared in constant time.
    fn verify(&self, message: &[u8], tag: &[u8; 32]) -> bool;
}

/// A state document that does not carry the fleet's seal for where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the fleet's `{key}` was changed by something that does not hold the fleet's key ({reason}); it is refused as tampered"
)]
pub struct Tampered {
    /// The document.
    pub key: String,
    /// What does not verify.
    pub reason: String,
}

const MAGIC: &str = "bardo-sealed-v1";

fn message(subject: &str, seq: u64, doc: &[u8]) -> Vec<u8> {
    let mut m = format!("{subject}\n{seq}\n").into_bytes();
    m.extend_from_slice(doc);
    m
}

/// The payload for `doc` (empty: deleted) on `subject`, to land at stream sequence `seq`.
pub fn seal(sealer: &dyn Sealer, subject: &str, seq: u64, doc: &[u8]) -> Vec<u8> {
    let tag = sealer.mac(&message(subject, seq, doc));
    let mut out = format!("{MAGIC} {} {seq}\n", hex(&tag)).into_bytes();
    out.extend_from_slice(doc);
    out
}

/// The document in `payload`, stored at stream sequence `seq` on `subject` (None: a sealed
/// deletion), if its seal verifies for that place.
pub fn open(
    sealer: &dyn Sealer,
    key: &str,
    subject: &str,
    seq: u64,
    payload: &[u8],
) -> Result<Option<Vec<u8>>, Tampered> {
    let tampered = |reason: &str| Tampered { key: key.to_owned(), reason: reason.to_owned() };
    let newline = payload.iter().position(|b| *b == b'\n').ok_or_else(|| tampered("no seal"))?;
    let head = std::str::from_utf8(&payload[..newline]).map_err(|_| tampered("no seal"))?;
    let doc = &payload[newline + 1..];
    let mut parts = head.split(' ');
    let (Some(MAGIC), Some(tag), Some(sealed_seq), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(tampered("no seal"));
    };
    // Read back exactly as `seal` writes it: a payload the fleet did not write is refused, even
    // one that says the same (`+12` and `012` parse as 12; hex in capitals decodes alike).
    let tag = unhex(tag).ok_or_else(|| tampered("a malformed seal"))?;
    let sealed_seq: u64 = sealed_seq
        .parse()
        .ok()
        .filter(|s: &u64| s.to_string() == sealed_seq)
        .ok_or_else(|| tampered("a malformed seal"))?;
    if !sealer.verify(&message(subject, sealed_seq, doc), &tag) {
        return Err(tampered("its seal does not verify under the fleet's key"));
    }
    if sealed_seq != seq {
        return Err(tampered(&format!(
            "it was sealed for state version {sealed_seq} and found at {seq}: an older copy written back"
        )));
    }
    Ok((!doc.is_empty()).then(|| doc.to_vec()))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn unhex(s: &str) -> Option<[u8; 32]> {
    // Lowercase only, as `hex` writes.
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let s = s.as_bytes();
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(s.chunks_exact(2)) {
        *byte = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy MAC for the pure parts (the host key is the real one): the key's bytes folded in.
    struct Toy(u8);
    impl Sealer for Toy {
        fn mac(&self, message: &[u8]) -> [u8; 32] {
            let mut out = [self.0; 32];
            for (i, b) in message.iter().enumerate() {
                out[i % 32] = out[i % 32].wrapping_mul(31).wrapping_add(*b);
            }
            out
        }
        fn verify(&self, message: &[u8], tag: &[u8; 32]) -> bool {
            &self.mac(message) == tag
        }
    }

    #[test]
    fn a_sealed_document_opens_only_where_it_was_sealed_for_and_under_the_key() {
        let (k, s) = (Toy(7), "bardo.f.state.halt");
        let payload = seal(&k, s, 12, br#"{"reason":"x"}"#);
        assert_eq!(open(&k, "halt", s, 12, &payload), Ok(Some(br#"{"reason":"x"}"#.to_vec())));
        let replayed = open(&k, "halt", s, 13, &payload).expect_err("replayed");
        assert!(replayed.reason.contains("older copy"), "{replayed}");
        assert!(
            open(&Toy(8), "halt", s, 12, &payload).expect_err("other key").reason.contains("does not verify")
        );
        assert!(open(&k, "phase", "bardo.f.state.phase", 12, &payload).is_err(), "moved to another key");
        let deleted = seal(&k, s, 3, b"");
        assert_eq!(open(&k, "halt", s, 3, &deleted), Ok(None), "a sealed deletion");
        for forged in [&b""[..], b"{}", b"bardo-sealed-v1 00 3\n{}"] {
            assert_eq!(open(&k, "halt", s, 3, forged).expect_err("forged").key, "halt");
        }
        let mut changed = payload.clone();
        *changed.last_mut().expect("bytes") = b']';
        assert!(open(&k, "halt", s, 12, &changed).is_err());
        // Found by the fleet_seal fuzz target: the same seal in capitals, or the sequence
        // padded, said the same and opened; only the bytes `seal` writes open now.
        let text = String::from_utf8(payload.clone()).expect("text");
        let (head, doc) = text.split_once('\n').expect("a seal line");
        for edited in [head.to_uppercase().replace("BARDO-SEALED-V1", MAGIC), head.replace(" 12", " 012")] {
            assert_ne!(edited, head);
            let edited = format!("{edited}\n{doc}");
            assert!(open(&k, "halt", s, 12, edited.as_bytes()).is_err(), "{edited}");
        }
    }
}
