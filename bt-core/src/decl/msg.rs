//! Messages built in const evaluation, for the compile-time errors of
//! declarations (the compile step's and the tunables').

/// A fixed-capacity message built in const evaluation.
pub(crate) struct Msg {
    buf: [u8; 512],
    len: usize,
}

impl Msg {
    pub(crate) const fn new() -> Self {
        Msg {
            buf: [0; 512],
            len: 0,
        }
    }

    pub(crate) const fn s(mut self, s: &str) -> Self {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() && self.len < self.buf.len() {
            self.buf[self.len] = b[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    pub(crate) const fn n(mut self, mut v: usize) -> Self {
        let mut digits = [0u8; 20];
        let mut k = 0;
        loop {
            digits[k] = b'0' + (v % 10) as u8;
            k += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        while k > 0 {
            k -= 1;
            if self.len < self.buf.len() {
                self.buf[self.len] = digits[k];
                self.len += 1;
            }
        }
        self
    }

    /// The message, for the `panic!` of the function named after the
    /// problem (a panic here would add a note of its own to rustc's error).
    pub(crate) const fn text(&self) -> &str {
        match core::str::from_utf8(self.buf.split_at(self.len).0) {
            Ok(msg) => msg,
            // Only reachable if a name was cut inside a UTF-8 sequence.
            Err(_) => "invalid decider tree",
        }
    }
}
