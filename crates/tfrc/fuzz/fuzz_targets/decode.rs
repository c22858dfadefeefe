//! Decoding any byte string gives a packet or a typed error, never a panic; a decoded packet
//! re-encodes to the same bytes (docs/wire-format.md: the encoding is canonical).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tfrc::wire::{self, Decoded};

fuzz_target!(|data: &[u8]| {
    match wire::decode(data) {
        Ok(Decoded::Data(h, payload)) => {
            let mut again = wire::encode_data(&h).to_vec();
            again.extend_from_slice(payload);
            assert_eq!(again, data);
        }
        Ok(Decoded::Feedback(fb)) => {
            assert_eq!(&wire::encode_feedback(&fb)[..], data);
        }
        Err(_) => {}
    }
    let _ = wire::decode_data(data);
    let _ = wire::decode_feedback(data);
});
