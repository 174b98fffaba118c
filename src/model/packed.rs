//! Bytes kept compressed in memory: what `basepress serve` holds of each
//! rendered page between builds (a site of 10,000 pages is over 200 MB of
//! HTML, a third of that packed). Packing is zstd at its fastest level;
//! the same bytes always pack to the same bytes, so two packed files are
//! equal exactly when their bytes are.

use bytes::Bytes;

/// Below this size a file is kept as it is: packing would save little.
const MIN_PACKED: usize = 512;

/// zstd's fastest regular level: about 0.1 ms for a page of 25 KB, a
/// third of its size.
const LEVEL: i32 = 1;

/// A file's bytes, packed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packed(Repr);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Repr {
    /// Small, or not smaller packed.
    Plain(Bytes),
    /// A zstd frame, and the length of what it unpacks to.
    Zstd(Bytes, usize),
}

impl Packed {
    /// Packs `bytes`.
    pub fn new(bytes: &Bytes) -> Packed {
        if bytes.len() >= MIN_PACKED {
            if let Ok(frame) = zstd::bulk::compress(bytes, LEVEL) {
                if frame.len() < bytes.len() {
                    // The buffer was sized for the worst case: kept, it
                    // would hold three times what it uses.
                    let frame = Bytes::from(frame.into_boxed_slice());
                    return Packed(Repr::Zstd(frame, bytes.len()));
                }
            }
        }
        Packed(Repr::Plain(bytes.clone()))
    }

    /// The bytes, unpacked (a new buffer each time, but for a small file).
    pub fn unpack(&self) -> Bytes {
        match &self.0 {
            Repr::Plain(b) => b.clone(),
            // A frame made by `new` from `len` bytes: unpacking it cannot
            // fail but for a lack of memory.
            Repr::Zstd(frame, len) => Bytes::from(
                zstd::bulk::decompress(frame, *len).expect("a frame packed here unpacks"),
            ),
        }
    }

    /// How many bytes it unpacks to.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Plain(b) => b.len(),
            Repr::Zstd(_, len) => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many bytes it holds in memory.
    pub fn held(&self) -> usize {
        match &self.0 {
            Repr::Plain(b) | Repr::Zstd(b, _) => b.len(),
        }
    }

    /// Whether both are the same buffer (a page a rebuild took from its
    /// cache) or hold the same bytes.
    pub fn same(&self, other: &Packed) -> bool {
        let (a, b) = match (&self.0, &other.0) {
            (Repr::Plain(a), Repr::Plain(b)) => (a, b),
            (Repr::Zstd(a, m), Repr::Zstd(b, n)) if m == n => (a, b),
            _ => return false,
        };
        same_bytes(a, b)
    }
}

/// Whether `a` and `b` are the same buffer or hold the same bytes.
pub fn same_bytes(a: &Bytes, b: &Bytes) -> bool {
    (a.as_ptr() == b.as_ptr() && a.len() == b.len()) || a == b
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn page(n: usize) -> Bytes {
        let mut s = String::from("<!doctype html><nav>");
        for i in 0..n {
            s.push_str(&format!(
                "<li><a href=\"/es/page-{i}/\">Página {i}</a></li>"
            ));
        }
        Bytes::from(s)
    }

    #[test]
    fn a_page_packs_smaller_and_unpacks_to_its_bytes() {
        let bytes = page(400);
        let packed = Packed::new(&bytes);
        assert!(
            packed.held() * 3 < bytes.len(),
            "{} of {}",
            packed.held(),
            bytes.len()
        );
        assert_eq!(packed.len(), bytes.len());
        assert_eq!(packed.unpack(), bytes);
    }

    #[test]
    fn small_files_are_kept_as_they_are() {
        let bytes = Bytes::from_static(b"body { color: red }");
        let packed = Packed::new(&bytes);
        assert_eq!(packed.held(), bytes.len());
        assert_eq!(packed.unpack(), bytes);
    }

    proptest! {
        #[test]
        fn packing_keeps_every_byte_and_equal_bytes_pack_equal(
            data in proptest::collection::vec(any::<u8>(), 0..4096),
            repeat in 1usize..8,
        ) {
            let bytes = Bytes::from(data.repeat(repeat));
            let packed = Packed::new(&bytes);
            prop_assert_eq!(packed.unpack(), bytes.clone());
            prop_assert_eq!(packed.len(), bytes.len());
            let again = Packed::new(&Bytes::from(bytes.to_vec()));
            prop_assert!(packed.same(&again));
            prop_assert_eq!(&packed, &again);
            let mut other = bytes.to_vec();
            other.push(0);
            prop_assert!(!packed.same(&Packed::new(&Bytes::from(other))));
        }
    }
}
