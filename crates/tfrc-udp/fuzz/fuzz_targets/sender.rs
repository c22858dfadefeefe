//! The sender's decoders (RETRY, HELLO_ACK with the Noise answer or RSA key, FEEDBACK,
//! FIN_ACK, plain and sealed); the body is `tfrc_udp::fuzzing::sender`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| tfrc_udp::fuzzing::sender(input));
