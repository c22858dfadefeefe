//! Decoding any byte string gives a message or a typed error, never a panic. An RFC 8888
//! report re-encodes to the same bytes (its encoding is canonical); a transport-wide message
//! re-encodes to bytes that decode to the same message (its chunk choice is the sender's).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rmcat::feedback::{CcfbReport, TwccFeedback};

fuzz_target!(|data: &[u8]| {
    if let Ok(r) = CcfbReport::decode(data) {
        assert_eq!(r.encode(), data);
    }
    if let Ok(f) = TwccFeedback::decode(data) {
        let again = f.encode();
        assert_eq!(again.len(), f.wire_len());
        assert_eq!(TwccFeedback::decode(&again).unwrap(), f);
    }
});
