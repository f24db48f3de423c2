//! A minimal protocol buffers writer (proto3 wire format): varints,
//! 64-bit doubles and length-delimited fields, with proto3's rule that a
//! scalar holding its default value (`""`, `false`, `0`) is not written.
//! Nested messages are built separately and written with their length.

/// Wire type of varint fields (`bool`, `int64`).
const VARINT: u8 = 0;
/// Wire type of 64-bit fields (`double`).
const FIXED64: u8 = 1;
/// Wire type of length-delimited fields (strings, bytes, messages).
const LEN: u8 = 2;

/// One message being written: its fields in the order they are added.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Message {
    buf: Vec<u8>,
}

impl Message {
    /// An empty message.
    pub fn new() -> Self {
        Self::default()
    }

    /// The encoded bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            // Truncation keeps the low seven bits, which is the point.
            self.buf.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    fn key(&mut self, field: u32, wire: u8) {
        self.varint((u64::from(field) << 3) | u64::from(wire));
    }

    fn len_delimited(&mut self, field: u32, bytes: &[u8]) {
        self.key(field, LEN);
        self.varint(bytes.len() as u64);
        self.buf.extend_from_slice(bytes);
    }

    /// A `string` field; nothing for `""`.
    pub fn string(&mut self, field: u32, value: &str) {
        if !value.is_empty() {
            self.len_delimited(field, value.as_bytes());
        }
    }

    /// One element of a `repeated string` field (written even if empty).
    pub fn repeated_string(&mut self, field: u32, value: &str) {
        self.len_delimited(field, value.as_bytes());
    }

    /// A `bool` field; nothing for `false`.
    pub fn bool(&mut self, field: u32, value: bool) {
        if value {
            self.key(field, VARINT);
            self.varint(1);
        }
    }

    /// A `bool` member of a `oneof`: written even when `false`, since a
    /// set oneof member is always present on the wire.
    pub fn oneof_bool(&mut self, field: u32, value: bool) {
        self.key(field, VARINT);
        self.varint(u64::from(value));
    }

    /// An `int64` field (two's complement varint); nothing for `0`.
    pub fn int64(&mut self, field: u32, value: i64) {
        if value != 0 {
            self.key(field, VARINT);
            // proto3 writes a negative int64 as its 64-bit two's complement.
            self.varint(value as u64);
        }
    }

    /// A `double` field (little-endian IEEE 754); nothing for `0.0`.
    pub fn double(&mut self, field: u32, value: f64) {
        if value != 0.0 {
            self.key(field, FIXED64);
            self.buf.extend_from_slice(&value.to_le_bytes());
        }
    }

    /// A message field, or one element of a repeated one (written even if
    /// the message is empty: presence is what a set sub-message means).
    pub fn message(&mut self, field: u32, value: Message) {
        self.len_delimited(field, &value.buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_encode_as_the_protobuf_encoding_guide_shows() {
        // Examples of https://protobuf.dev/programming-guides/encoding/:
        // field 1 = 150 is 08 96 01; field 2 = "testing" is 12 07 74 65 73 74 69 6e 67.
        let mut m = Message::new();
        m.int64(1, 150);
        m.string(2, "testing");
        assert_eq!(
            m.into_bytes(),
            [
                0x08, 0x96, 0x01, 0x12, 0x07, b't', b'e', b's', b't', b'i', b'n', b'g'
            ]
        );
        // Field 3 holding a message whose field 1 = 150: 1a 03 08 96 01.
        let mut inner = Message::new();
        inner.int64(1, 150);
        let mut m = Message::new();
        m.message(3, inner);
        assert_eq!(m.into_bytes(), [0x1a, 0x03, 0x08, 0x96, 0x01]);
    }

    #[test]
    fn defaults_are_not_written_but_repeated_and_messages_are() {
        let mut m = Message::new();
        m.string(1, "");
        m.bool(2, false);
        m.int64(3, 0);
        m.double(4, 0.0);
        assert!(m.into_bytes().is_empty());
        let mut m = Message::new();
        m.repeated_string(1, "");
        m.message(2, Message::new());
        m.oneof_bool(3, false);
        assert_eq!(m.into_bytes(), [0x0a, 0x00, 0x12, 0x00, 0x18, 0x00]);
    }

    #[test]
    fn bools_negatives_doubles_and_large_fields() {
        let mut m = Message::new();
        m.bool(1, true);
        m.int64(2, -1);
        m.double(3, 1.5);
        m.string(31, "x");
        let mut want = vec![0x08, 0x01, 0x10];
        want.extend([0xff; 9]);
        want.push(0x01);
        want.push(0x19);
        want.extend(1.5f64.to_le_bytes());
        // Field 31, wire type 2: (31 << 3) | 2 = 250, fa 01 as a varint.
        want.extend([0xfa, 0x01, 0x01, b'x']);
        assert_eq!(m.into_bytes(), want);
    }
}
