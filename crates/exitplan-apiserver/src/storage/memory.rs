//! Where an in-memory store's database lives: its "file" as fixed-size
//! chunks, each allocated when first written.
//!
//! redb grows its file by doubling it and expects the new part to read as
//! zeros. redb's own in-memory backend is one `Vec<u8>` that it zero-fills
//! on every growth: the whole doubled length becomes resident at once
//! (though redb fills it only as the database grows into it), and each
//! growth copies the old contents into a new allocation twice the size,
//! holding both for a moment. Here a chunk no one has written reads as
//! zeros without being allocated, and growing allocates nothing.

use std::io;
use std::sync::{PoisonError, RwLock};

/// Bytes per chunk: a multiple of redb's 4 KiB page, small enough that a
/// half-used chunk wastes little.
const CHUNK: usize = 64 * 1024;

/// The database "file" of an in-memory store (a redb storage backend).
#[derive(Debug, Default)]
pub(super) struct ChunkedMemory {
    file: RwLock<File>,
}

#[derive(Debug, Default)]
struct File {
    /// The length redb set.
    len: u64,
    /// Chunk `i` holds bytes `i * CHUNK ..`; `None`: never written (zeros).
    chunks: Vec<Option<Box<[u8]>>>,
}

fn out_of_range() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "offset beyond the end of the database",
    )
}

/// The chunk-relative pieces of `len` bytes at `offset`: (chunk, start in
/// chunk, start in the caller's buffer, length).
fn pieces(offset: u64, len: usize) -> io::Result<Vec<(usize, usize, usize, usize)>> {
    let mut out = Vec::new();
    let mut at = usize::try_from(offset).map_err(|_| out_of_range())?;
    let mut done = 0;
    while done < len {
        let within = at % CHUNK;
        let n = (CHUNK - within).min(len - done);
        out.push((at / CHUNK, within, done, n));
        at += n;
        done += n;
    }
    Ok(out)
}

impl File {
    fn check(&self, offset: u64, len: usize) -> io::Result<()> {
        let end = offset
            .checked_add(u64::try_from(len).map_err(|_| out_of_range())?)
            .ok_or_else(out_of_range)?;
        if end > self.len {
            return Err(out_of_range());
        }
        Ok(())
    }
}

impl ChunkedMemory {
    /// An empty database file.
    pub(super) fn new() -> Self {
        Self::default()
    }
}

impl redb::StorageBackend for ChunkedMemory {
    fn len(&self) -> io::Result<u64> {
        Ok(self.file.read().unwrap_or_else(PoisonError::into_inner).len)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let file = self.file.read().unwrap_or_else(PoisonError::into_inner);
        file.check(offset, out.len())?;
        for (chunk, within, at, n) in pieces(offset, out.len())? {
            let dest = &mut out[at..at + n];
            match file.chunks.get(chunk).and_then(Option::as_deref) {
                Some(data) => dest.copy_from_slice(&data[within..within + n]),
                None => dest.fill(0),
            }
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut file = self.file.write().unwrap_or_else(PoisonError::into_inner);
        let bytes = usize::try_from(len).map_err(|_| out_of_range())?;
        let chunks = bytes.div_ceil(CHUNK);
        if len < file.len {
            // Bytes past the new end must read as zeros if the file grows again.
            file.chunks.truncate(chunks);
            let tail = bytes % CHUNK;
            if tail != 0
                && let Some(Some(last)) = file.chunks.last_mut()
            {
                last[tail..].fill(0);
            }
        }
        file.chunks.resize_with(chunks, || None);
        file.len = len;
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut file = self.file.write().unwrap_or_else(PoisonError::into_inner);
        file.check(offset, data.len())?;
        for (chunk, within, at, n) in pieces(offset, data.len())? {
            let slot = file.chunks.get_mut(chunk).ok_or_else(out_of_range)?;
            let stored = slot.get_or_insert_with(|| vec![0; CHUNK].into_boxed_slice());
            stored[within..within + n].copy_from_slice(&data[at..at + n]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use redb::StorageBackend;

    use super::*;

    #[test]
    fn unwritten_bytes_read_as_zeros_and_cost_nothing() {
        let m = ChunkedMemory::new();
        m.set_len(10 * CHUNK as u64).expect("grow");
        let mut out = vec![1u8; 100];
        m.read(5 * CHUNK as u64, &mut out).expect("read");
        assert!(out.iter().all(|&b| b == 0));
        let allocated = m.file.read().expect("lock").chunks.iter().flatten().count();
        assert_eq!(allocated, 0);
    }

    #[test]
    fn writes_across_chunks_read_back() {
        let m = ChunkedMemory::new();
        m.set_len(3 * CHUNK as u64).expect("grow");
        let data: Vec<u8> = (0..CHUNK + 200).map(|i| (i % 251) as u8 + 1).collect();
        let at = CHUNK as u64 - 100;
        m.write(at, &data).expect("write");
        let mut out = vec![0u8; data.len()];
        m.read(at, &mut out).expect("read");
        assert_eq!(out, data);
        // Neighbouring bytes are untouched zeros.
        let mut before = [9u8; 4];
        m.read(at - 4, &mut before).expect("read");
        assert_eq!(before, [0; 4]);
        // The write's three chunks are allocated, nothing else.
        let allocated = m.file.read().expect("lock").chunks.iter().flatten().count();
        assert_eq!(allocated, 3);
    }

    #[test]
    fn access_past_the_end_fails() {
        let m = ChunkedMemory::new();
        m.set_len(1000).expect("grow");
        let mut out = [0u8; 10];
        assert!(m.read(995, &mut out).is_err());
        assert!(m.write(995, &out).is_err());
        assert!(m.read(990, &mut out).is_ok());
    }

    #[test]
    fn shrinking_then_growing_reads_zeros_past_the_old_end() {
        let m = ChunkedMemory::new();
        m.set_len(2 * CHUNK as u64).expect("grow");
        m.write(0, &vec![7u8; 2 * CHUNK]).expect("write");
        m.set_len(100).expect("shrink");
        assert_eq!(m.len().expect("len"), 100);
        m.set_len(2 * CHUNK as u64).expect("grow again");
        let mut out = vec![1u8; 2 * CHUNK - 100];
        m.read(100, &mut out).expect("read");
        assert!(out.iter().all(|&b| b == 0));
        let mut kept = [0u8; 100];
        m.read(0, &mut kept).expect("read");
        assert_eq!(kept, [7u8; 100]);
    }
}
