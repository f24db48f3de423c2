//! The protocol buffers wire format: a reader of `(field number, value)`
//! pairs and a writer, as gogo-protobuf's generated Kubernetes code reads
//! and writes them (fields in number order, map entries as messages).

use super::WireError;

/// Wire type of varints.
pub const VARINT: u8 = 0;
/// Wire type of 64-bit values.
pub const FIXED64: u8 = 1;
/// Wire type of length-delimited values.
pub const LEN: u8 = 2;
/// Wire type of 32-bit values.
pub const FIXED32: u8 = 5;

/// One value read from the wire.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Wire<'a> {
    /// A varint.
    Varint(u64),
    /// A 64-bit value.
    Fixed64(u64),
    /// A 32-bit value.
    Fixed32(u32),
    /// A length-delimited value.
    Bytes(&'a [u8]),
}

/// Reads the fields of one message.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// A varint.
    pub fn varint(&mut self) -> Result<u64, WireError> {
        let mut out = 0u64;
        for shift in (0..70).step_by(7) {
            let (&b, rest) = self.buf.split_first().ok_or(WireError::UnexpectedEof)?;
            self.buf = rest;
            if shift == 63 && b > 1 {
                return Err(WireError::Overflow);
            }
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(out);
            }
        }
        Err(WireError::Overflow)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.buf.len() < n {
            return Err(WireError::UnexpectedEof);
        }
        let (b, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(b)
    }

    /// The next field, `None` at the end of the message.
    pub fn field(&mut self) -> Result<Option<(u32, Wire<'a>)>, WireError> {
        if self.buf.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let wire = (key & 7) as u8;
        let number = u32::try_from(key >> 3).map_err(|_| WireError::Overflow)?;
        if number == 0 {
            return Err(WireError::IllegalTag);
        }
        let value = match wire {
            VARINT => Wire::Varint(self.varint()?),
            FIXED64 => {
                let b = self.take(8)?;
                Wire::Fixed64(u64::from_le_bytes(
                    b.try_into().map_err(|_| WireError::UnexpectedEof)?,
                ))
            }
            LEN => {
                let len = usize::try_from(self.varint()?).map_err(|_| WireError::NegativeLength)?;
                Wire::Bytes(self.take(len)?)
            }
            FIXED32 => {
                let b = self.take(4)?;
                Wire::Fixed32(u32::from_le_bytes(
                    b.try_into().map_err(|_| WireError::UnexpectedEof)?,
                ))
            }
            other => return Err(WireError::IllegalWireType(other)),
        };
        Ok(Some((number, value)))
    }
}

/// Writes one message.
#[derive(Debug, Default, Clone)]
pub struct Writer {
    /// The bytes written so far.
    pub buf: Vec<u8>,
}

impl Writer {
    /// A varint.
    pub fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            // Keeping the low seven bits is the point of the cast.
            self.buf.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    /// A field key.
    pub fn key(&mut self, number: u32, wire: u8) {
        self.varint((u64::from(number) << 3) | u64::from(wire));
    }

    /// A length-delimited field.
    pub fn bytes(&mut self, number: u32, bytes: &[u8]) {
        self.key(number, LEN);
        self.varint(bytes.len() as u64);
        self.buf.extend_from_slice(bytes);
    }

    /// A varint field (`int32`/`int64` as two's complement, `bool`).
    pub fn varint_field(&mut self, number: u32, v: u64) {
        self.key(number, VARINT);
        self.varint(v);
    }

    /// A `double` field.
    pub fn double(&mut self, number: u32, v: f64) {
        self.key(number, FIXED64);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A nested message written by `f`, length-prefixed.
    pub fn message<E>(
        &mut self,
        number: u32,
        f: impl FnOnce(&mut Writer) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut inner = Writer::default();
        f(&mut inner)?;
        self.bytes(number, &inner.buf);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_as_the_encoding_guide_shows() {
        // https://protobuf.dev/programming-guides/encoding/: 150 is 96 01;
        // -1 as int32/int64 is ten bytes.
        for (v, bytes) in [
            (150u64, vec![0x96, 0x01]),
            (1, vec![0x01]),
            (
                (-1i64) as u64,
                vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
        ] {
            let mut w = Writer::default();
            w.varint(v);
            assert_eq!(w.buf, bytes);
            assert_eq!(Reader::new(&bytes).varint(), Ok(v));
        }
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let cases: &[(&[u8], WireError)] = &[
            (&[0x0a, 0x05, b'a'], WireError::UnexpectedEof),
            (&[0x0b], WireError::IllegalWireType(3)),
            (&[0x08], WireError::UnexpectedEof),
            (&[0x00, 0x01], WireError::IllegalTag),
            (
                &[
                    0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
                ],
                WireError::Overflow,
            ),
        ];
        for (bytes, want) in cases {
            let mut r = Reader::new(bytes);
            assert_eq!(r.field().map(|_| ()), Err(*want), "{bytes:?}");
        }
    }
}
