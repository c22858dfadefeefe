//! The receiver's whole input path; the body is `tfrc_udp::fuzzing::receiver`, where its input
//! format is described (the corpus replays as a test on stable: `tests/fuzz_corpus.rs`).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| tfrc_udp::fuzzing::receiver(input));
