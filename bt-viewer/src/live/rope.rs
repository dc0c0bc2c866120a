//! A response's bytes in several pieces, written as one: a whole
//! recording is made in pieces of [`CHUNK`] bytes, shared by every client
//! it is sent to, and never copied into one.

use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::sync::Arc;

use hyper::body::{Buf, Bytes};

/// The size of a whole recording's pieces.
pub(super) const CHUNK: usize = 1 << 20;

/// Bytes in pieces, none of them empty: one frame of a response (and one
/// chunk on the wire, whatever its pieces).
#[derive(Default)]
pub(super) struct Rope {
    pieces: VecDeque<Bytes>,
    len: usize,
}

impl Rope {
    /// Adds `bytes` at the end.
    pub(super) fn push(&mut self, bytes: Bytes) {
        if !bytes.is_empty() {
            self.len += bytes.len();
            self.pieces.push_back(bytes);
        }
    }

    /// `pieces`, one after the other.
    pub(super) fn of<'a>(pieces: impl IntoIterator<Item = &'a Bytes>) -> Self {
        let mut rope = Rope::default();
        for piece in pieces {
            rope.push(piece.clone());
        }
        rope
    }
}

impl From<Bytes> for Rope {
    fn from(bytes: Bytes) -> Self {
        let mut rope = Rope::default();
        rope.push(bytes);
        rope
    }
}

impl Buf for Rope {
    fn remaining(&self) -> usize {
        self.len
    }

    fn chunk(&self) -> &[u8] {
        self.pieces.front().map_or(&[], |b| b)
    }

    fn advance(&mut self, mut n: usize) {
        assert!(n <= self.len, "advanced past the end of the bytes");
        self.len -= n;
        while n > 0 {
            let Some(front) = self.pieces.front_mut() else {
                return;
            };
            if n < front.len() {
                front.advance(n);
                return;
            }
            n -= front.len();
            self.pieces.pop_front();
        }
    }

    fn chunks_vectored<'a>(&'a self, dst: &mut [IoSlice<'a>]) -> usize {
        let mut n = 0;
        for (slot, piece) in dst.iter_mut().zip(&self.pieces) {
            *slot = IoSlice::new(piece);
            n += 1;
        }
        n
    }
}

/// A writer that keeps what it is given in pieces of [`CHUNK`] bytes.
#[derive(Default)]
pub(super) struct Chunks {
    done: Vec<Bytes>,
    part: Vec<u8>,
}

impl Chunks {
    /// The pieces written.
    pub(super) fn finish(mut self) -> Arc<[Bytes]> {
        if !self.part.is_empty() {
            self.part.shrink_to_fit();
            self.done.push(Bytes::from(self.part));
        }
        self.done.into()
    }
}

impl io::Write for Chunks {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while !rest.is_empty() {
            if self.part.capacity() == 0 {
                self.part.reserve_exact(CHUNK);
            }
            let take = rest.len().min(CHUNK - self.part.len());
            self.part.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.part.len() == CHUNK {
                self.done.push(Bytes::from(std::mem::take(&mut self.part)));
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_rope_reads_as_its_pieces_end_to_end() {
        let mut chunks = Chunks::default();
        let text: Vec<u8> = (0..CHUNK * 2 + 77).map(|i| (i % 251) as u8).collect();
        for piece in text.chunks(70_000) {
            chunks.write_all(piece).unwrap();
        }
        let pieces = chunks.finish();
        assert_eq!(pieces.len(), 3);
        let mut rope = Rope::of([Bytes::from_static(b"<"), Bytes::new()].iter());
        pieces.iter().for_each(|p| rope.push(p.clone()));
        rope.push(Bytes::from_static(b">"));
        assert_eq!(rope.remaining(), text.len() + 2);
        let mut slices = [IoSlice::new(&[]); 8];
        assert_eq!(rope.chunks_vectored(&mut slices), 5);
        let mut read = Vec::new();
        while rope.has_remaining() {
            let step = rope.chunk().len().min(333_333);
            read.extend_from_slice(&rope.chunk()[..step]);
            rope.advance(step);
        }
        assert_eq!(read.len(), text.len() + 2);
        assert_eq!(&read[1..read.len() - 1], &text[..]);
    }
}
