//! MulTFRC (draft-irtf-iccrg-multfrc-01), requirement by requirement: one test per row of the
//! MulTFRC table in `docs/variants.md`. The equation is written out again here, from the
//! draft's pseudo-code, so that no expected value comes from the code under test.

// The shared helpers write the RFC's formulas as index loops.
#![allow(clippy::needless_range_loop)]

#[path = "rfc5348/support.rs"]
mod support;

use support::*;
use tfrc::equation::{Equation, EquationForm};
use tfrc::loss_history::{Averaging, Discounting, GroupingRule, LossHistory, LostRange, Mark};
use tfrc::variants::{self, VariantChoice};
use tfrc::{wire, Profile, Receiver, Sender};

/// The draft's §2 pseudo-code, in packets per second ("X_Bps = ... * s" with s = 1).
fn draft(n: f64, b: f64, r: f64, t_rto: f64, p: f64, j: f64) -> f64 {
    let mut af = if n < 12.0 {
        n * (1.0 - (1.0 - 1.0 / n).powf(j))
    } else {
        j
    };
    if n <= 1.0 {
        // Reading (docs/variants.md): one flow is hit; (1 − 1/N)^j is undefined for N < 1.
        af = 1.0;
    }
    af = af.min(n.ceil()).max(1.0);
    let a = p * b * af * (24.0 * n.powi(2) + p * b * af * (n - 2.0 * af).powi(2));
    let x = (af * p * b * (2.0 * af - n) + a.sqrt()) / (6.0 * n.powi(2) * p);
    let z = t_rto * (1.0 + 32.0 * p.powi(2)) / (1.0 - p);
    let q = (2.0 * j * b * z / (r * (1.0 + 3.0 * n / j) * x.powi(2)))
        .min(n * z / (x * r))
        .min(n);
    (1.0 - q / n) / (p * x * r) + q / (z * (1.0 - p))
}

fn multfrc(n: f64) -> Equation {
    Equation {
        form: EquationForm::MulTfrc { n },
        ..Equation::RFC5348
    }
}

/// §2: the MulTFRC equation, over a grid of N, j, p, R (b = 1, t_RTO = 4R), to 1e-12; and three
/// values computed independently (Python, from the same pseudo-code): X(N = 2, j = 1) =
/// 236 611.907 B/s, X(2, 3) = 157 901.410 and X(20, 3) = 1 279 310.601 at s = 1000, R = 0.1 s,
/// p = 0.01.
#[test]
fn s2_equation() {
    for n in [0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 11.9, 12.0, 40.0] {
        for j in [1.0, 1.5, 3.0, 10.0] {
            for p in [1e-6, 1e-4, 0.003, 0.05, 0.2, 0.6] {
                for r in [0.01, 0.1, 0.5] {
                    let got = multfrc(n).rate_j(1.0, r, 4.0 * r, p, j);
                    let want = draft(n, 1.0, r, 4.0 * r, p, j);
                    assert!(
                        close(got, want, 1e-12),
                        "N {n} j {j} p {p} R {r}: {got} vs {want}"
                    );
                }
            }
        }
    }
    for (n, j, want) in [
        (2.0, 1.0, 236_611.907),
        (2.0, 3.0, 157_901.410),
        (20.0, 3.0, 1_279_310.601),
    ] {
        let got = multfrc(n).rate_j(1000.0, 0.1, 0.4, 0.01, j);
        assert!((got - want).abs() < 0.01, "N {n} j {j}: {got}");
    }
}

/// §1 (the draft's purpose): MulTFRC "emulates a number of TFRC flows". With one loss per event
/// (j = 1) and small p the rate is N times RFC 5348's: within 0.1% at p = 1e-6 for N = 0.5, 2, 4,
/// and within 4% of one TFRC flow for N = 1 up to p = 1%. (The timeout terms differ, so N = 1 is
/// not RFC 5348 at high p: 0.33 of it at p = 0.3.)
#[test]
fn s1_n_flows_at_low_loss() {
    for n in [0.5, 2.0, 4.0] {
        let ratio = multfrc(n).rate(1000.0, 0.1, 0.4, 1e-6) / x_bps(1000.0, 0.1, 0.4, 1e-6);
        assert!(close(ratio, n, 1e-3), "N {n}: {ratio}");
    }
    for p in [1e-5, 1e-4, 1e-3, 0.01] {
        let ratio = multfrc(1.0).rate(1000.0, 0.1, 0.4, p) / x_bps(1000.0, 0.1, 0.4, p);
        assert!((ratio - 1.0).abs() < 0.04, "p {p}: {ratio}");
    }
}

/// "j: the number of packets lost in a loss event" (reading: the weighted mean over the recent
/// events, `docs/variants.md`): events with 3, 1 and 2 lost packets (oldest first) give
/// j = (2·w_0 + 1·w_1 + 3·w_2)/(w_0 + w_1 + w_2) = 2 with n = 8; 1 before any loss.
#[test]
fn receiver_measures_j() {
    let mut h = LossHistory::new(
        Averaging {
            discount: Discounting::Off,
            ..Averaging::RFC5348
        },
        GroupingRule { round_gate: false },
    );
    assert_eq!(h.lost_per_event(), 1.0);
    let at = |k: u64| Mark {
        seq: k,
        time: ms(10 * k),
    };
    let lose = |h: &mut LossHistory, lo: u64, hi: u64| {
        h.add_lost(LostRange {
            lo,
            hi,
            before: at(lo - 1),
            after: at(hi + 1),
            rtt: std::time::Duration::from_millis(100),
            round: 0,
        });
    };
    lose(&mut h, 100, 102);
    lose(&mut h, 200, 200);
    lose(&mut h, 300, 301);
    let want = (2.0 * w(0, 8) + w(1, 8) + 3.0 * w(2, 8)) / (w(0, 8) + w(1, 8) + w(2, 8));
    assert!(close(h.lost_per_event(), want, 1e-12));
    // Through a receiver with the `multfrc` variant, feedback carries it; without, 1.
    let profile = variants::apply(Profile::rfc5348(), &[VariantChoice::new("multfrc")]).unwrap();
    for (mut r, multi) in [
        (Receiver::new(profile.receiver).unwrap(), true),
        (rfc_rx(), false),
    ] {
        let mut last = None;
        for k in (0..400u64).filter(|k| !matches!(k, 100..=102 | 200 | 300 | 301)) {
            if let Some(f) = deliver(&mut r, k, 100) {
                last = Some(f);
            }
        }
        let j = last.unwrap().lost_per_event;
        if multi {
            // The three events; the synthetic first interval has no event.
            assert!(close(j, want, 1e-12), "{j}");
        } else {
            assert_eq!(j, 1.0);
        }
    }
}

/// The sender puts the reported j and its N into the equation: X_calc = s·X_MulTFRC(N, j).
#[test]
fn sender_uses_n_and_j() {
    let profile = variants::apply(
        Profile::rfc5348(),
        &[VariantChoice::new("multfrc").with("n", 2.0)],
    )
    .unwrap();
    let mut s = Sender::new(profile.sender).unwrap();
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    let mut f = fb(ms(100), 1e9, 0.01);
    f.lost_per_event = 3.0;
    s.on_feedback(ms(200), &f);
    let st = s.status();
    assert_eq!(st.lost_per_event, 3.0);
    let r = st.rtt.unwrap().as_secs_f64();
    assert!(close(
        st.x_calc,
        S * draft(2.0, 1.0, r, 4.0 * r, 0.01, 3.0),
        1e-12
    ));
    // Without the variant the same feedback gives RFC 5348's X_Bps.
    let mut plain = rfc_tx();
    plain.set_infinite_backlog(ms(0));
    plain.poll_transmit(ms(0));
    plain.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    plain.on_feedback(ms(200), &f);
    assert!(close(
        plain.status().x_calc,
        x_bps(S, r, 4.0 * r, 0.01),
        1e-12
    ));
}

/// Wire format version 2 has no field for j (`docs/wire-format.md`): it decodes as 1, so
/// MulTFRC with j > 1 runs in the simulator (typed feedback) only.
#[test]
fn wire_v2_does_not_carry_j() {
    let mut f = fb(ms(0), 1000.0, 0.01);
    f.lost_per_event = 3.0;
    let back = wire::decode_feedback(&wire::encode_feedback(&f)).unwrap();
    assert_eq!(back.lost_per_event, 1.0);
}
