//! Fixtures shared by this crate's tests and the tests of the crates that build scenarios
//! (`lab`): a scenario that uses most keys, and ways to vary it. Not part of the API.

use crate::{Queue, RedParams, Scenario};

/// A valid scenario using most keys: three links (the middle one RED), a TFRC and a TCP flow,
/// a link event.
pub const GOOD: &str = r#"
name = "tfrc-vs-tcp"
duration = "100s"
seed = 7
warmup = "5.0s"
sample_interval = "500ms"

[[links]]
from = "n0"
to = "r0"
bandwidth = "10Mbps"
delay = "2ms"

[[links]]
from = "r0"
to = "r1"
bandwidth = "1.5Mb"
delay = "20ms"
queue = "red"
queue_limit = 50
[links.red]
thresh = 5
maxthresh = 15

[[links]]
from = "r1"
to = "n2"
bandwidth = "10 Mbit/s"
delay = "0.002s"
[links.loss]
model = "bernoulli"
rate = 0.01
direction = "both"

[[flows]]
name = "tfrc1"
kind = "tfrc"
from = "n0"
to = "n2"
start = "0.1s"
profile = "ns2"

[[flows]]
name = "tcp1"
kind = "tcp"
from = "n0"
to = "n2"
variant = "tahoe"
window = 100

[[events]]
at = "50s"
action = "down"
link = "r0-r1"
"#;

/// [`GOOD`] with the r0-r1 link's queue and `[links.red]` table replaced.
pub fn with_red(queue: &str, red: &str) -> String {
    GOOD.replace(
        "queue = \"red\"\nqueue_limit = 50\n[links.red]\nthresh = 5\nmaxthresh = 15\n",
        &format!("queue = \"{queue}\"\nqueue_limit = 50\n[links.red]\n{red}"),
    )
}

/// [`GOOD`] with `line` added to flow tfrc1 (after its `profile`).
pub fn with_tfrc_line(line: &str) -> String {
    GOOD.replace("profile = \"ns2\"", &format!("profile = \"ns2\"\n{line}"))
}

/// The RED parameters of the r0-r1 link of `text` (a variation of [`GOOD`]).
pub fn red_params(text: &str) -> RedParams {
    match Scenario::parse("r.toml", text).unwrap().links[1]
        .queue
        .clone()
    {
        Queue::Red { params, .. } => params,
        q => panic!("not RED: {q:?}"),
    }
}
