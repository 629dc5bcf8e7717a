//! Clock and time-control tests: exact millisecond values per control, the race at the
//! flag instant, periods, delays, pauses, penalties, the "Time!" rule, DGT mode, refused
//! operations, and properties (conservation, replay, round trips).

use draughts_arbiter::clock::{
    Bonus, Clock, ClockError, ClockEvent, ClockOp, ControlError, Flag, FlagCause, Ledger,
    MAX_BONUS, MAX_MOVE_LIMIT, MAX_MOVES, MAX_PERIOD_TIME, Millis, MoveLimit, Options, ParseError,
    ParseErrorKind, PdnTimeControl, Period, Phase, Side, TimeControl,
};

const S: Millis = 1_000;
const MIN: Millis = 60_000;
const H: Millis = 3_600_000;

use Side::{Black, White};

fn tc(s: &str) -> TimeControl {
    s.parse()
        .unwrap_or_else(|e| panic!("{s:?} should parse: {e}"))
}

fn started(control: &str, side: Side, now: Millis) -> Clock {
    let mut clock = Clock::new(tc(control));
    clock.start(side, now).expect("a new clock starts");
    clock
}

fn period(moves: Option<u32>, time: Millis, bonus: Bonus) -> Period {
    Period { moves, time, bonus }
}

fn parse_err(s: &str) -> ParseError {
    s.parse::<TimeControl>().expect_err("should not parse")
}

// ---------------------------------------------------------------- time-control syntax

#[test]
fn friendly_forms_parse_to_exact_milliseconds() {
    assert_eq!(tc("45m"), TimeControl::sudden_death(45 * MIN));
    assert_eq!(tc("90s"), TimeControl::sudden_death(90 * S));
    assert_eq!(tc("90"), TimeControl::sudden_death(90 * S));
    assert_eq!(tc("1h30m"), TimeControl::sudden_death(90 * MIN));
    assert_eq!(tc("1500ms"), TimeControl::sudden_death(1_500));
    assert_eq!(tc("1m0s250ms"), TimeControl::sudden_death(60_250));
    assert_eq!(tc("3m+2s"), TimeControl::fischer(3 * MIN, 2 * S));
    assert_eq!(tc("80m+1m"), TimeControl::fischer(80 * MIN, MIN));
    assert_eq!(tc("4800+60"), TimeControl::fischer(80 * MIN, MIN));
    let three = TimeControl::new(
        vec![
            period(Some(50), 2 * H, Bonus::None),
            period(Some(25), H, Bonus::None),
            period(None, 15 * MIN, Bonus::Increment(30 * S)),
        ],
        Options::default(),
    )
    .expect("valid");
    assert_eq!(tc("2h/50,1h/25,15m+30s"), three);
    // The proto's own example, exactly as written there.
    assert_eq!(tc("2h/50 then 1h/25 then 15min+30s"), three);
    assert_eq!(tc("2h/50then1h/25then15min+30s"), three);
    assert_eq!(tc("120min/50 then 60m/25 then 900+30"), three);
    assert_eq!(tc(" 2h/50, 1h/25, 15m + 30s "), three);
    assert_eq!(tc("50/7200:25/3600:900+30"), three);
    assert_eq!(
        tc("90m d30s").periods(),
        &[period(None, 90 * MIN, Bonus::Delay(30 * S))]
    );
    assert_eq!(
        tc("90m b30s").periods(),
        &[period(None, 90 * MIN, Bonus::Bronstein(30 * S))]
    );
    assert_eq!(
        tc("90md30s").periods(),
        &[period(None, 90 * MIN, Bonus::Delay(30 * S))]
    );
}

#[test]
fn friendly_options_parse() {
    let t = tc("30m+30s; inc-at-start");
    assert!(t.options().increment_at_start);
    let t = tc("90m/40+30s,30m+30s; dgt");
    assert!(t.options().period_on_flag);
    let t = tc("24h; move-limit 5m+1m");
    assert_eq!(t.options().move_limit, Some(MoveLimit::ENGLISH));
    let t = tc("10m;move-limit 5m + 1m ;dgt; inc-at-start");
    assert_eq!(
        t.options(),
        Options {
            increment_at_start: true,
            period_on_flag: true,
            move_limit: Some(MoveLimit::ENGLISH),
        }
    );
}

#[test]
fn display_prints_the_canonical_friendly_form() {
    for (input, printed) in [
        ("45m", "45m"),
        ("90", "90s"),
        ("5400", "90m"),
        ("1h30m", "90m"),
        ("120m", "2h"),
        ("80m+1m", "80m+1m"),
        ("3m+2s", "3m+2s"),
        ("1500ms", "1500ms"),
        ("2h/50, 1h/25, 15m+30s", "2h/50,1h/25,15m+30s"),
        ("40/7200:3600", "2h/40,1h"),
        ("90m d30s", "90m d30s"),
        ("90m b30s", "90m b30s"),
        ("2h/40 d5s,1h d5s", "2h/40 d5s,1h d5s"),
        (
            "10m;move-limit 5m+1m;dgt;inc-at-start",
            "10m; inc-at-start; dgt; move-limit 5m+1m",
        ),
    ] {
        assert_eq!(tc(input).to_string(), printed, "printing {input:?}");
        assert_eq!(tc(printed), tc(input), "re-reading {printed:?}");
    }
}

#[test]
fn pdn_tags_parse_and_print() {
    for (tag, friendly) in [
        ("40/7200:3600", "2h/40,1h"),
        ("4800+60", "80m+1m"),
        ("300", "5m"),
        ("40/5400+30:1800+30", "90m/40+30s,30m+30s"),
        ("40/9000", "150m/40"),
    ] {
        let parsed = TimeControl::from_pdn(tag).expect("valid tag");
        assert_eq!(parsed, tc(friendly), "{tag}");
        assert_eq!(parsed.pdn().expect("expressible").to_string(), tag);
        let value: PdnTimeControl = tag.parse().expect("valid tag");
        assert_eq!(value, PdnTimeControl::Timed(parsed));
        assert_eq!(value.to_pdn().expect("expressible"), tag);
    }
    assert_eq!(
        "-".parse::<PdnTimeControl>().expect("untimed"),
        PdnTimeControl::Untimed
    );
    assert_eq!(
        "?".parse::<PdnTimeControl>().expect("unknown"),
        PdnTimeControl::Unknown
    );
    assert_eq!(PdnTimeControl::Untimed.to_pdn().expect("prints"), "-");
    assert_eq!(PdnTimeControl::Unknown.to_pdn().expect("prints"), "?");
}

#[test]
fn pdn_refuses_what_the_tag_cannot_express() {
    for (friendly, message) in [
        ("90m d30s", "pdn tag cannot express a delay"),
        ("90m b30s", "pdn tag cannot express a delay"),
        ("1500ms", "pdn tag cannot express a fraction of a second"),
        ("3m+500ms", "pdn tag cannot express a fraction of a second"),
        (
            "30m+30s; inc-at-start",
            "pdn tag cannot express an increment at start",
        ),
        ("90m/40,30m; dgt", "pdn tag cannot express dgt mode"),
        (
            "24h; move-limit 5m+1m",
            "pdn tag cannot express a move limit",
        ),
    ] {
        let err = tc(friendly).pdn().expect_err(friendly);
        assert_eq!(err.to_string(), message, "{friendly}");
    }
}

#[test]
fn pdn_parsing_is_strict() {
    let err = TimeControl::from_pdn("90m").expect_err("unit in a pdn tag");
    assert_eq!(
        err,
        ParseError {
            position: 2,
            kind: ParseErrorKind::UnitInPdn
        }
    );
    let err = TimeControl::from_pdn("*60").expect_err("sandclock");
    assert_eq!(err.to_string(), "at byte 0: sandclock (*) is not supported");
    let err = TimeControl::from_pdn("40/7200,3600").expect_err("comma in a pdn tag");
    assert_eq!(
        err.to_string(),
        "at byte 7: expected '+', ':' or the end, found ','"
    );
    let err = TimeControl::from_pdn("-").expect_err("untimed is not a control");
    assert_eq!(err.position, 0);
    let err = TimeControl::from_pdn("300 d5").expect_err("no delay in a pdn tag");
    assert_eq!(
        err.to_string(),
        "at byte 4: expected '+', ':' or the end, found 'd'"
    );
    let err = TimeControl::from_pdn("300+5 then 60").expect_err("no then in a pdn tag");
    assert_eq!(
        err.to_string(),
        "at byte 6: expected ':' or the end, found 't'"
    );
    let err = TimeControl::from_pdn("0").expect_err("zero");
    assert_eq!(
        err.kind,
        ParseErrorKind::Control(ControlError::ZeroTime { period: 1 })
    );
}

#[test]
fn parse_errors_say_where_and_what_was_expected() {
    use ParseErrorKind as K;
    let expected = |what: &'static str, found: Option<char>| K::Expected { what, found };
    for (input, position, kind, message) in [
        (
            "",
            0,
            K::Empty,
            "at byte 0: empty time control: expected e.g. 5m+3s, 90m/40+30s then 30m+30s, or 40/7200:3600",
        ),
        (
            "   ",
            3,
            K::Empty,
            "at byte 3: empty time control: expected e.g. 5m+3s, 90m/40+30s then 30m+30s, or 40/7200:3600",
        ),
        (
            "5m+",
            3,
            expected("an increment after '+', e.g. 5m+3s", None),
            "at byte 3: expected an increment after '+', e.g. 5m+3s, found the end",
        ),
        (
            "5m+x",
            3,
            expected("an increment after '+', e.g. 5m+3s", Some('x')),
            "at byte 3: expected an increment after '+', e.g. 5m+3s, found 'x'",
        ),
        (
            "90m d",
            5,
            expected("a delay after 'd', e.g. 90m d30s", None),
            "at byte 5: expected a delay after 'd', e.g. 90m d30s, found the end",
        ),
        (
            "90m b?",
            5,
            expected("a delay after 'b', e.g. 90m b30s", Some('?')),
            "at byte 5: expected a delay after 'b', e.g. 90m b30s, found '?'",
        ),
        (
            "90x",
            2,
            expected("a unit (h, min, m, s or ms), e.g. 1h30m", Some('x')),
            "at byte 2: expected a unit (h, min, m, s or ms), e.g. 1h30m, found 'x'",
        ),
        (
            "1h30",
            4,
            expected("a unit (h, min, m, s or ms), e.g. 1h30m", None),
            "at byte 4: expected a unit (h, min, m, s or ms), e.g. 1h30m, found the end",
        ),
        (
            "30m1h",
            4,
            K::UnitsOutOfOrder,
            "at byte 4: units must go down from h to min (m) to s to ms, e.g. 1h30m",
        ),
        (
            "2h/",
            3,
            expected("a move count after '/', e.g. 2h/50", None),
            "at byte 3: expected a move count after '/', e.g. 2h/50, found the end",
        ),
        (
            "2h/x",
            3,
            expected("a move count after '/', e.g. 2h/50", Some('x')),
            "at byte 3: expected a move count after '/', e.g. 2h/50, found 'x'",
        ),
        (
            "2h/50m",
            5,
            K::MoveCountWithUnit,
            "at byte 5: a move count takes no unit: 2h/50 is 2 hours for 50 moves",
        ),
        (
            "40/",
            3,
            expected("a time after '/', e.g. 40/7200", None),
            "at byte 3: expected a time after '/', e.g. 40/7200, found the end",
        ),
        (
            "m",
            0,
            expected(
                "a time such as 90m, 1h30m, 15min or 300 (seconds)",
                Some('m'),
            ),
            "at byte 0: expected a time such as 90m, 1h30m, 15min or 300 (seconds), found 'm'",
        ),
        (
            "2h/50 then",
            10,
            expected("a period after 'then', e.g. 1h/25 or 15min+30s", None),
            "at byte 10: expected a period after 'then', e.g. 1h/25 or 15min+30s, found the end",
        ),
        (
            "2h/50, x",
            7,
            expected("a period after ',', e.g. 1h/25 or 15m+30s", Some('x')),
            "at byte 7: expected a period after ',', e.g. 1h/25 or 15m+30s, found 'x'",
        ),
        (
            "40/7200:",
            8,
            expected("a period after ':', e.g. 3600 or 25/3600", None),
            "at byte 8: expected a period after ':', e.g. 3600 or 25/3600, found the end",
        ),
        (
            "1h 2h",
            3,
            expected("'+', 'd', 'b', 'then', ',', ';' or the end", Some('2')),
            "at byte 3: expected '+', 'd', 'b', 'then', ',', ';' or the end, found '2'",
        ),
        (
            "1h+5s x",
            6,
            expected("'then', ',', ';' or the end", Some('x')),
            "at byte 6: expected 'then', ',', ';' or the end, found 'x'",
        ),
        (
            "2h/50 thence 1h",
            6,
            expected("'+', 'd', 'b', 'then', ',', ';' or the end", Some('t')),
            "at byte 6: expected '+', 'd', 'b', 'then', ',', ';' or the end, found 't'",
        ),
        (
            "45m; foo",
            5,
            expected(
                "an option after ';': inc-at-start, dgt or move-limit",
                Some('f'),
            ),
            "at byte 5: expected an option after ';': inc-at-start, dgt or move-limit, found 'f'",
        ),
        (
            "45m;",
            4,
            expected("an option after ';': inc-at-start, dgt or move-limit", None),
            "at byte 4: expected an option after ';': inc-at-start, dgt or move-limit, found the end",
        ),
        (
            "45m; dgt x",
            9,
            expected("';' and another option, or the end", Some('x')),
            "at byte 9: expected ';' and another option, or the end, found 'x'",
        ),
        (
            "45m; dgt; dgt",
            10,
            K::DuplicateOption,
            "at byte 10: option given twice",
        ),
        (
            "24h; move-limit",
            15,
            expected("a time after move-limit, e.g. move-limit 5m+1m", None),
            "at byte 15: expected a time after move-limit, e.g. move-limit 5m+1m, found the end",
        ),
        (
            "24h; move-limit 5m",
            18,
            expected(
                "'+' and the allowance after the move limit, e.g. move-limit 5m+1m",
                None,
            ),
            "at byte 18: expected '+' and the allowance after the move limit, e.g. move-limit 5m+1m, found the end",
        ),
        (
            "24h; move-limit 5m+",
            19,
            expected("an allowance after '+', e.g. move-limit 5m+1m", None),
            "at byte 19: expected an allowance after '+', e.g. move-limit 5m+1m, found the end",
        ),
        (
            "2h,1h",
            0,
            K::Control(ControlError::MissingMoveCount { period: 1 }),
            "at byte 0: period 1 needs a move count",
        ),
        (
            "2h/50,1h/0,1h",
            9,
            K::Control(ControlError::ZeroMoveCount { period: 2 }),
            "at byte 9: period 2 has a move count of zero",
        ),
        (
            "2h/50,1h/25; dgt",
            13,
            K::Control(ControlError::DgtNeedsSuddenDeath),
            "at byte 13: dgt mode needs a final period without a move count",
        ),
        (
            "1h; move-limit 0s+1m",
            15,
            K::Control(ControlError::ZeroMoveLimit),
            "at byte 15: the move limit must be more than 0 and at most 24h",
        ),
        (
            "*60",
            0,
            K::Sandclock,
            "at byte 0: sandclock (*) is not supported",
        ),
    ] {
        let err = parse_err(input);
        assert_eq!(err, ParseError { position, kind }, "{input:?}");
        assert_eq!(err.to_string(), message, "{input:?}");
    }
}

#[test]
fn zero_and_absurd_controls_are_refused_saying_what_is_allowed() {
    use ControlError as C;
    for (input, position, error, message) in [
        (
            "0",
            0,
            C::ZeroTime { period: 1 },
            "at byte 0: period 1 gives no time: a period's time must be more than 0 and at most 168h (7 days), or 0 with a delay (0s d5s), with an increment in a later period (2h/40 then 0s+30s) or with inc-at-start",
        ),
        (
            "0m",
            0,
            C::ZeroTime { period: 1 },
            "at byte 0: period 1 gives no time: a period's time must be more than 0 and at most 168h (7 days), or 0 with a delay (0s d5s), with an increment in a later period (2h/40 then 0s+30s) or with inc-at-start",
        ),
        ("0h0m0s+5s", 0, C::ZeroTime { period: 1 }, ""),
        ("2h/40 then 0s", 11, C::ZeroTime { period: 2 }, ""),
        ("0 b5s", 0, C::ZeroTime { period: 1 }, ""),
        (
            "99999999999h",
            0,
            C::TimeTooLong { period: 1 },
            "at byte 0: period 1's time is too long: at most 168h (7 days)",
        ),
        (
            "99999999999999999999999999",
            0,
            C::TimeTooLong { period: 1 },
            "",
        ),
        ("169h", 0, C::TimeTooLong { period: 1 }, ""),
        (
            "1h/40 then 99999999999999999999999h",
            11,
            C::TimeTooLong { period: 2 },
            "",
        ),
        (
            "2h/1001",
            3,
            C::TooManyMoves { period: 1 },
            "at byte 3: period 1's move count is too large: from 1 to 1000 moves",
        ),
        ("99999999999/7200", 0, C::TooManyMoves { period: 1 }, ""),
        (
            "5m+61m",
            3,
            C::BonusTooLarge { period: 1 },
            "at byte 3: period 1's increment or delay is too long: at most 1h",
        ),
        ("1h/40 then 5m d2h", 15, C::BonusTooLarge { period: 2 }, ""),
        (
            "5m b99999999999999999999999s",
            4,
            C::BonusTooLarge { period: 1 },
            "",
        ),
        (
            "24h; move-limit 25h+1m",
            16,
            C::MoveLimitTooLong,
            "at byte 16: the move limit is too long: more than 0 and at most 24h",
        ),
        (
            "24h; move-limit 5m+2h",
            19,
            C::AllowanceTooLong,
            "at byte 19: the allowance after the move limit is too long: at most 1h",
        ),
    ] {
        let err = parse_err(input);
        assert_eq!(
            err,
            ParseError {
                position,
                kind: ParseErrorKind::Control(error)
            },
            "{input:?}"
        );
        if !message.is_empty() {
            assert_eq!(err.to_string(), message, "{input:?}");
        }
    }
    // The limits themselves are allowed.
    for ok in [
        "168h",
        "1ms",
        "5m+1h",
        "5m+0s",
        "2h/1000",
        "1/1",
        "24h; move-limit 24h+1h",
        "0s d2s",
        "0+30s; inc-at-start",
        "2h/40 then 0s+30s",
    ] {
        tc(ok);
    }
    // 16 periods are allowed, a 17th is refused where it starts.
    tc(&format!("{}1m", "1m/1 then ".repeat(15)));
    let seventeen = format!("{}1m", "1m/1 then ".repeat(16));
    let err = parse_err(&seventeen);
    assert_eq!(err.position, 160);
    assert_eq!(err.to_string(), "at byte 160: at most 16 periods");
}

#[test]
fn time_control_new_checks_its_rules() {
    assert_eq!(
        TimeControl::new(vec![], Options::default()),
        Err(ClockError::Control(ControlError::NoPeriods))
    );
    let err = TimeControl::new(
        vec![period(None, H, Bonus::None), period(None, H, Bonus::None)],
        Options::default(),
    )
    .expect_err("first period needs a move count");
    assert_eq!(err.to_string(), "period 1 needs a move count");
}

#[test]
fn time_control_deserialises_through_the_parser() {
    use serde::Deserialize;
    use serde::de::value::{Error, StrDeserializer};
    let ok = TimeControl::deserialize(StrDeserializer::<Error>::new("2h/50,1h/25,15m+30s"))
        .expect("valid");
    assert_eq!(ok, tc("2h/50,1h/25,15m+30s"));
    TimeControl::deserialize(StrDeserializer::<Error>::new("2h,1h"))
        .expect_err("an invalid control is refused on the way in");
    assert_eq!(String::from(ok), "2h/50,1h/25,15m+30s");
}

// ---------------------------------------------------------------- sudden death and the race

#[test]
fn sudden_death_charges_exact_milliseconds() {
    let mut clock = started("45m", White, 1_000);
    assert_eq!(clock.remaining(White, 1_000), 45 * MIN);
    assert_eq!(clock.remaining(White, 61_000), 45 * MIN - 60_000);
    assert_eq!(clock.remaining(Black, 61_000), 45 * MIN);
    assert_eq!(clock.flag_time(1_000), Some(1_000 + 45 * MIN));
    clock.press(White, 13_345).expect("white's clock runs");
    assert_eq!(clock.remaining(White, 50_000), 45 * MIN - 12_345);
    assert_eq!(clock.remaining(Black, 50_000), 45 * MIN - 36_655);
    assert_eq!(clock.flag_time(50_000), Some(13_345 + 45 * MIN));
    assert_eq!(clock.move_times(White), &[12_345]);
    assert_eq!(clock.moves(White), 1);
    assert_eq!(clock.moves(Black), 0);
    assert_eq!(clock.phase(50_000), Phase::Running(Black));
}

#[test]
fn press_at_the_exact_flag_instant_is_too_late() {
    let mut clock = started("10s", White, 0);
    assert_eq!(clock.flag_time(0), Some(10_000));
    let before = clock.clone();
    let err = clock
        .press(White, 10_000)
        .expect_err("remaining reached zero");
    let flag = Flag {
        side: White,
        at: 10_000,
        cause: FlagCause::TimeExpired,
    };
    assert_eq!(err, ClockError::FlagFell(flag));
    assert_eq!(err.to_string(), "white's flag fell at 10000 ms");
    assert_eq!(clock, before, "a refused press changes nothing");
    assert_eq!(clock.remaining(White, 10_000), 0);
    assert_eq!(clock.flag(10_000), Some(flag));
    assert_eq!(clock.flag(9_999), None);
}

#[test]
fn press_one_millisecond_before_the_flag_is_in_time() {
    let mut clock = started("10s", White, 0);
    clock.press(White, 9_999).expect("1 ms left");
    assert_eq!(clock.remaining(White, 20_000), 1);
    assert_eq!(clock.phase(9_999), Phase::Running(Black));
}

#[test]
fn flag_freezes_both_clocks_at_zero_and_reports_side_and_instant() {
    let mut clock = started("10s", White, 0);
    clock.press(White, 4_000).expect("in time");
    // Black's flag falls at 14 000.
    assert_eq!(clock.next_deadline(4_000), Some(14_000));
    let events = clock
        .settle(20_000)
        .expect("settle never refuses a later instant");
    let flag = Flag {
        side: Black,
        at: 14_000,
        cause: FlagCause::TimeExpired,
    };
    assert_eq!(events, vec![ClockEvent::Flagged(flag)]);
    assert_eq!(clock.phase(99_000), Phase::Flagged(flag));
    assert_eq!(clock.remaining(Black, 99_000), 0);
    assert_eq!(clock.remaining(White, 99_000), 6_000);
    assert_eq!(clock.flag_time(99_000), Some(14_000));
    assert_eq!(clock.next_deadline(99_000), None);
    assert_eq!(clock.press(Black, 21_000), Err(ClockError::FlagFell(flag)));
    assert_eq!(
        clock.add_time(Black, S, 21_000),
        Err(ClockError::FlagFell(flag))
    );
    assert_eq!(clock.settle(21_000), Ok(vec![]));
}

#[test]
fn a_flag_seen_by_a_query_is_the_same_before_and_after_settle() {
    let mut clock = started("10s", White, 0);
    let lazy = (clock.phase(30_000), clock.remaining(White, 30_000));
    clock.settle(30_000).expect("settles");
    assert_eq!(lazy, (clock.phase(30_000), clock.remaining(White, 30_000)));
}

// ---------------------------------------------------------------- Fischer increment

#[test]
fn fischer_increment_is_added_after_each_own_move() {
    let mut clock = started("3m+2s", White, 0);
    assert_eq!(
        clock.remaining(White, 0),
        180_000,
        "no increment before move 1"
    );
    clock.press(White, 10_000).expect("in time");
    assert_eq!(clock.remaining(White, 10_000), 172_000);
    clock.press(Black, 25_000).expect("in time");
    assert_eq!(clock.remaining(Black, 25_000), 167_000);
    clock.press(White, 25_500).expect("in time");
    assert_eq!(clock.remaining(White, 25_500), 173_500);
    assert_eq!(clock.move_times(White), &[10_000, 500]);
    assert_eq!(clock.move_times(Black), &[15_000]);
    assert_eq!(clock.ledger(White, 25_500).increments, 4_000);
}

#[test]
fn increment_at_start_is_added_to_both_clocks_before_move_1() {
    let mut clock = started("30m+30s; inc-at-start", White, 0);
    assert_eq!(clock.remaining(White, 0), 30 * MIN + 30 * S);
    assert_eq!(clock.remaining(Black, 0), 30 * MIN + 30 * S);
    clock.press(White, 40_000).expect("in time");
    assert_eq!(clock.remaining(White, 40_000), 30 * MIN + 20 * S);
    assert_eq!(clock.ledger(White, 40_000).increments, 60_000);
    assert_eq!(clock.ledger(Black, 40_000).increments, 30_000);
}

#[test]
fn fischer_flag_time_ignores_the_increment_to_come() {
    let clock = started("1m+10s", Black, 5_000);
    assert_eq!(clock.flag_time(5_000), Some(65_000));
}

// ---------------------------------------------------------------- delays

#[test]
fn simple_delay_does_not_charge_the_first_part_of_each_move() {
    let mut clock = started("1m d5s", White, 0);
    assert_eq!(clock.remaining(White, 4_000), 60_000, "within the delay");
    assert_eq!(clock.remaining(White, 5_000), 60_000, "delay just used");
    assert_eq!(clock.remaining(White, 5_001), 59_999);
    clock.press(White, 3_000).expect("in time");
    assert_eq!(
        clock.remaining(White, 3_000),
        60_000,
        "3 s move costs nothing"
    );
    clock.press(Black, 11_000).expect("in time");
    assert_eq!(clock.remaining(Black, 11_000), 57_000, "8 s move costs 3 s");
    let l = clock.ledger(Black, 11_000);
    assert_eq!((l.charged, l.exempt), (3_000, 5_000));
    // White: 60 s plus 5 s delay from 11 000.
    assert_eq!(clock.flag_time(11_000), Some(76_000));
}

#[test]
fn simple_delay_with_no_base_time_flags_at_the_end_of_the_delay() {
    let mut clock = started("0s d2s", White, 0);
    assert_eq!(clock.remaining(White, 0), 0);
    assert_eq!(clock.flag_time(0), Some(2_000));
    clock.press(White, 1_999).expect("within the delay");
    assert_eq!(
        clock.press(Black, 3_999),
        Err(ClockError::FlagFell(Flag {
            side: Black,
            at: 3_999,
            cause: FlagCause::TimeExpired
        }))
    );
}

#[test]
fn bronstein_delay_gives_back_the_time_used_up_to_the_delay() {
    let mut clock = started("1m b5s", White, 0);
    assert_eq!(
        clock.remaining(White, 4_000),
        56_000,
        "counts down while running"
    );
    assert_eq!(
        clock.flag_time(0),
        Some(60_000),
        "no delay before the press"
    );
    clock.press(White, 3_000).expect("in time");
    assert_eq!(clock.remaining(White, 3_000), 60_000, "3 s used, 3 s back");
    clock.press(Black, 11_000).expect("in time");
    assert_eq!(clock.remaining(Black, 11_000), 57_000, "8 s used, 5 s back");
    let l = clock.ledger(Black, 11_000);
    assert_eq!((l.charged, l.refunds), (8_000, 5_000));
}

#[test]
fn delay_never_increases_remaining_time() {
    for control in ["1m d5s", "1m b5s"] {
        let mut clock = started(control, White, 0);
        let mut now = 0;
        for used in [0, 1, 4_999, 5_000, 5_001, 12_000] {
            let side = if clock.moves(White) == clock.moves(Black) {
                White
            } else {
                Black
            };
            let before = clock.remaining(side, now);
            now += used;
            clock.press(side, now).expect("in time");
            assert!(
                clock.remaining(side, now) <= before,
                "{control}: {used} ms move raised {side} from {before}"
            );
        }
    }
}

#[test]
fn pause_also_stops_the_delay() {
    let mut clock = started("1m d5s", White, 0);
    clock.pause(3_000).expect("running");
    clock.resume(100_000).expect("paused");
    assert_eq!(
        clock.remaining(White, 102_000),
        60_000,
        "5 s of delay in total"
    );
    assert_eq!(clock.remaining(White, 103_000), 59_000);
}

// ---------------------------------------------------------------- periods

#[test]
fn next_period_is_added_at_the_press_that_completes_the_move_count() {
    let mut clock = started("2m/2,1m/1,30s", White, 0);
    clock.press(White, 10_000).expect("move 1");
    assert_eq!(clock.period(White, 10_000), 1);
    clock.press(Black, 20_000).expect("move 1");
    let events = clock.press(White, 30_000).expect("move 2");
    assert_eq!(
        events,
        vec![ClockEvent::PeriodReached {
            side: White,
            period: 2,
            added: 60_000,
            at: 30_000
        }]
    );
    assert_eq!(clock.remaining(White, 30_000), 120_000 - 20_000 + 60_000);
    assert_eq!(clock.period(White, 30_000), 2);
    assert_eq!(clock.period(Black, 30_000), 1);
    clock.press(Black, 31_000).expect("move 2");
    let events = clock.press(White, 32_000).expect("move 3");
    assert_eq!(
        events,
        vec![ClockEvent::PeriodReached {
            side: White,
            period: 3,
            added: 30_000,
            at: 32_000
        }]
    );
    assert_eq!(clock.remaining(White, 32_000), 160_000 - 1_000 + 30_000);
    clock.press(Black, 33_000).expect("move 3");
    assert_eq!(
        clock.press(White, 34_000),
        Ok(vec![]),
        "sudden death adds nothing"
    );
    assert_eq!(clock.period(White, 34_000), 3);
    assert_eq!(clock.ledger(White, 34_000).periods, 90_000);
}

#[test]
fn increment_at_a_period_boundary_is_the_old_periods_then_the_new_period_is_added() {
    let mut clock = started("1m/2+1s,30s+2s", White, 0);
    clock.press(White, 1_000).expect("move 1");
    assert_eq!(clock.remaining(White, 1_000), 60_000);
    clock.press(Black, 2_000).expect("move 1");
    clock.press(White, 4_000).expect("move 2");
    // 60 000 - 2 000 + 1 000 (period 1 increment) + 30 000 (period 2)
    assert_eq!(clock.remaining(White, 4_000), 89_000);
    clock.press(Black, 5_000).expect("move 2");
    clock.press(White, 6_000).expect("move 3");
    // period 2's increment from move 3 on
    assert_eq!(clock.remaining(White, 6_000), 89_000 - 1_000 + 2_000);
    let l = clock.ledger(White, 6_000);
    assert_eq!((l.increments, l.periods), (4_000, 30_000));
}

#[test]
fn a_last_period_with_a_move_count_repeats() {
    let mut clock = started("10s/1", White, 0);
    let mut now = 0;
    for n in 1..=3 {
        now += 1_000;
        let events = clock.press(White, now).expect("in time");
        assert_eq!(
            events,
            vec![ClockEvent::PeriodReached {
                side: White,
                period: n + 1,
                added: 10_000,
                at: now
            }]
        );
        now += 1_000;
        clock.press(Black, now).expect("in time");
    }
    assert_eq!(clock.remaining(White, now), 10_000 + 3 * 9_000);
    assert_eq!(clock.period(White, now), 4);
}

#[test]
fn period_bonus_changes_with_the_period() {
    // Period 1 has a simple delay, period 2 a Bronstein delay.
    let mut clock = started("1m/1 d5s,1m b5s", White, 0);
    clock.press(White, 8_000).expect("move 1, 3 s charged");
    assert_eq!(clock.remaining(White, 8_000), 57_000 + 60_000);
    clock.press(Black, 9_000).expect("black");
    assert_eq!(
        clock.remaining(White, 11_000),
        115_000,
        "no delay on move 2"
    );
    clock.press(White, 17_000).expect("move 2: 8 s, 5 s back");
    assert_eq!(clock.remaining(White, 17_000), 117_000 - 8_000 + 5_000);
}

// ---------------------------------------------------------------- DGT mode

#[test]
fn dgt_mode_adds_the_next_period_when_the_time_runs_out() {
    let mut clock = started("10s/2,5s; dgt", White, 0);
    assert_eq!(
        clock.flag_time(0),
        Some(15_000),
        "the flag waits for period 2"
    );
    assert_eq!(clock.next_deadline(0), Some(10_000));
    assert_eq!(clock.remaining(White, 12_000), 3_000);
    assert_eq!(clock.period(White, 12_000), 2);
    let events = clock.settle(12_000).expect("settles");
    assert_eq!(
        events,
        vec![ClockEvent::PeriodOnFlag {
            side: White,
            period: 2,
            added: 5_000,
            at: 10_000,
            moves: 0,
            required: 2
        }]
    );
    assert_eq!(clock.next_deadline(12_000), Some(15_000));
    clock.press(White, 14_999).expect("in time in period 2");
    assert_eq!(clock.remaining(White, 14_999), 1);
}

#[test]
fn dgt_mode_does_not_add_a_period_at_the_move_count() {
    let mut clock = started("10s/1,5s; dgt", White, 0);
    assert_eq!(clock.press(White, 1_000), Ok(vec![]));
    assert_eq!(clock.remaining(White, 1_000), 9_000);
    assert_eq!(clock.period(White, 1_000), 1);
    clock.press(Black, 2_000).expect("black");
    // White's 9 s run out at 11 000; the period comes then, with its move tally.
    let events = clock.settle(11_000).expect("settles");
    assert_eq!(
        events,
        vec![ClockEvent::PeriodOnFlag {
            side: White,
            period: 2,
            added: 5_000,
            at: 11_000,
            moves: 1,
            required: 1
        }]
    );
}

#[test]
fn dgt_period_due_at_the_press_instant_is_added_before_the_press() {
    let mut clock = started("10s/2,5s; dgt", White, 0);
    let events = clock.press(White, 10_000).expect("period 2 arrives first");
    assert!(matches!(
        events.as_slice(),
        [ClockEvent::PeriodOnFlag { at: 10_000, .. }]
    ));
    assert_eq!(clock.remaining(White, 10_000), 5_000);
}

#[test]
fn dgt_flag_in_the_final_period_is_a_flag() {
    let mut clock = started("1s/1,1s/1,2s+500ms; dgt", White, 0);
    assert_eq!(clock.flag_time(0), Some(4_000));
    let events = clock.settle(4_000).expect("settles");
    assert_eq!(events.len(), 3, "two periods then the flag: {events:?}");
    assert_eq!(
        events.last(),
        Some(&ClockEvent::Flagged(Flag {
            side: White,
            at: 4_000,
            cause: FlagCause::TimeExpired
        }))
    );
    assert_eq!(clock.ledger(White, 4_000).periods, 3_000);
}

// ---------------------------------------------------------------- the English "Time!" rule

#[test]
fn time_rule_warns_after_the_limit_then_forfeits_after_the_allowance() {
    let mut clock = started("24h; move-limit 5m+1m", White, 0);
    assert_eq!(clock.next_deadline(0), Some(5 * MIN));
    assert_eq!(clock.flag_time(0), Some(6 * MIN));
    assert_eq!(clock.time_called(299_999), None);
    assert_eq!(clock.time_called(300_000), Some(300_000));
    let events = clock.settle(300_000).expect("settles");
    assert_eq!(
        events,
        vec![ClockEvent::TimeCalled {
            side: White,
            at: 300_000,
            deadline: 360_000
        }]
    );
    assert_eq!(clock.next_deadline(300_000), Some(360_000));
    clock.press(White, 359_999).expect("within the allowance");
    assert_eq!(clock.time_called(359_999), None, "a new move, no call");
    // Black's move began at 359 999: forfeit at 359 999 + 6 min.
    let forfeit = Flag {
        side: Black,
        at: 719_999,
        cause: FlagCause::MoveLimit,
    };
    assert_eq!(clock.flag_time(360_000), Some(719_999));
    let err = clock.press(Black, 719_999).expect_err("too late");
    assert_eq!(err, ClockError::FlagFell(forfeit));
    assert_eq!(
        err.to_string(),
        "black exceeded the move time limit at 719999 ms"
    );
    let events = clock.settle(800_000).expect("settles");
    assert_eq!(
        events,
        vec![
            ClockEvent::TimeCalled {
                side: Black,
                at: 659_999,
                deadline: 719_999
            },
            ClockEvent::Flagged(forfeit)
        ]
    );
    assert_eq!(clock.remaining(Black, 800_000), 24 * H - 6 * MIN);
}

#[test]
fn time_rule_does_not_count_pauses() {
    let mut clock = started("24h; move-limit 5m+1m", White, 0);
    clock.pause(4 * MIN).expect("running");
    clock.resume(30 * MIN).expect("paused");
    assert_eq!(clock.next_deadline(30 * MIN), Some(31 * MIN));
    assert_eq!(clock.flag_time(30 * MIN), Some(32 * MIN));
}

#[test]
fn game_clock_flag_comes_before_the_move_limit_when_earlier() {
    let clock = started("2m; move-limit 5m+1m", White, 0);
    assert_eq!(clock.flag_time(0), Some(2 * MIN));
    assert_eq!(
        clock.flag(2 * MIN).map(|f| f.cause),
        Some(FlagCause::TimeExpired)
    );
}

// ---------------------------------------------------------------- pauses and arbiter actions

#[test]
fn pauses_do_not_charge_time() {
    let mut clock = started("10m", White, 0);
    clock.pause(5_000).expect("running");
    assert_eq!(clock.phase(6_000), Phase::Paused(White));
    assert_eq!(clock.remaining(White, 60_000), 595_000);
    assert_eq!(clock.flag_time(60_000), None, "nothing falls while paused");
    clock.resume(65_000).expect("paused");
    assert_eq!(clock.remaining(White, 70_000), 590_000);
    assert_eq!(clock.flag_time(70_000), Some(65_000 + 595_000));
    clock.press(White, 70_000).expect("in time");
    assert_eq!(
        clock.move_times(White),
        &[10_000],
        "thinking time excludes the pause"
    );
    assert_eq!(clock.move_elapsed(70_000), 0);
}

#[test]
fn press_is_refused_while_paused_or_by_the_waiting_side() {
    let mut clock = started("10m", White, 0);
    let err = clock
        .press(Black, 1_000)
        .expect_err("black's clock is not running");
    assert_eq!(err, ClockError::NotRunning(Black));
    assert_eq!(err.to_string(), "black's clock is not running");
    clock.pause(2_000).expect("running");
    assert_eq!(clock.press(White, 3_000), Err(ClockError::Paused));
    assert_eq!(clock.pause(3_000), Err(ClockError::Paused));
    clock.resume(4_000).expect("paused");
    assert_eq!(clock.resume(5_000), Err(ClockError::NotPaused));
}

#[test]
fn penalties_and_bonuses_adjust_exactly() {
    let mut clock = started("10m", White, 0);
    clock
        .subtract_time(Black, MIN, 1_000)
        .expect("penalty on the waiting side");
    assert_eq!(clock.remaining(Black, 1_000), 9 * MIN);
    clock
        .add_time(White, 2 * MIN, 30_000)
        .expect("bonus on the running side");
    assert_eq!(clock.remaining(White, 30_000), 12 * MIN - 30_000);
    assert_eq!(clock.flag_time(30_000), Some(12 * MIN));
    clock
        .subtract_time(White, 30_000, 40_000)
        .expect("penalty on the running side");
    assert_eq!(clock.remaining(White, 40_000), 12 * MIN - 70_000);
    let w = clock.ledger(White, 40_000);
    assert_eq!(
        w,
        Ledger {
            initial: 10 * MIN,
            added: 2 * MIN,
            removed: 30_000,
            charged: 40_000,
            ..Ledger::default()
        }
    );
    assert_eq!(w.balance(), Some(clock.remaining(White, 40_000)));
    let b = clock.ledger(Black, 40_000);
    assert_eq!((b.removed, b.balance()), (MIN, Some(9 * MIN)));
}

#[test]
fn set_remaining_is_exact_at_its_instant_even_mid_move() {
    let mut clock = started("10m d5s", White, 0);
    clock
        .set_remaining(White, 2 * MIN, 20_000)
        .expect("running side");
    assert_eq!(clock.remaining(White, 20_000), 2 * MIN);
    assert_eq!(clock.remaining(White, 21_000), 2 * MIN - 1_000);
    assert_eq!(clock.flag_time(20_000), Some(140_000));
    clock
        .set_remaining(Black, 11 * MIN, 21_000)
        .expect("waiting side");
    assert_eq!(clock.remaining(Black, 50_000), 11 * MIN);
    let w = clock.ledger(White, 21_000);
    assert_eq!(w.removed, 10 * MIN - 15_000 - 2 * MIN);
    assert_eq!(w.balance(), Some(2 * MIN - 1_000));
    assert_eq!(clock.ledger(Black, 21_000).added, MIN);
}

#[test]
fn adjustments_before_start_and_while_paused_are_allowed() {
    let mut clock = Clock::new(tc("5m"));
    clock
        .set_remaining(Black, 4 * MIN, 0)
        .expect("time odds before start");
    clock.start(White, 10).expect("starts");
    clock.pause(20).expect("running");
    clock.add_time(White, 5 * S, 30).expect("while paused");
    assert_eq!(clock.remaining(White, 1_000), 5 * MIN + 5 * S - 10);
    assert_eq!(clock.remaining(Black, 1_000), 4 * MIN);
}

#[test]
fn a_penalty_cannot_empty_a_clock() {
    let mut clock = started("1m", White, 0);
    let before = clock.clone();
    let err = clock
        .subtract_time(White, 50_000, 10_000)
        .expect_err("exhausts");
    assert_eq!(
        err,
        ClockError::ExhaustsClock {
            side: White,
            amount: 50_000,
            remaining: 50_000
        }
    );
    assert_eq!(
        err.to_string(),
        "penalty of 50000 ms exhausts white's remaining 50000 ms"
    );
    assert_eq!(clock, before);
    clock
        .subtract_time(White, 49_999, 10_000)
        .expect("leaves 1 ms");
    assert_eq!(clock.flag_time(10_000), Some(10_001));
}

#[test]
fn stop_freezes_both_clocks() {
    let mut clock = started("1m", White, 0);
    clock.press(White, 5_000).expect("in time");
    clock.stop(7_000).expect("game over");
    assert_eq!(clock.phase(100_000), Phase::Stopped { at: 7_000 });
    assert_eq!(clock.remaining(Black, 100_000), 58_000);
    assert_eq!(clock.remaining(White, 100_000), 55_000);
    assert_eq!(clock.flag_time(100_000), None);
    assert_eq!(clock.press(Black, 8_000), Err(ClockError::Stopped));
    assert_eq!(clock.stop(8_000), Err(ClockError::Stopped));
}

// ---------------------------------------------------------------- refused operations

#[test]
fn refused_operations_change_nothing() {
    let mut clock = started("1m+1s", White, 10_000);
    clock.press(White, 12_000).expect("in time");
    let cases = [
        (
            ClockOp::Start {
                side: White,
                now: 13_000,
            },
            ClockError::AlreadyStarted,
        ),
        (
            ClockOp::Press {
                side: White,
                now: 13_000,
            },
            ClockError::NotRunning(White),
        ),
        (ClockOp::Resume { now: 13_000 }, ClockError::NotPaused),
        (
            ClockOp::AddTime {
                side: White,
                amount: 0,
                now: 13_000,
            },
            ClockError::ZeroAmount,
        ),
        (
            ClockOp::SubtractTime {
                side: Black,
                amount: 0,
                now: 13_000,
            },
            ClockError::ZeroAmount,
        ),
        (
            ClockOp::SetRemaining {
                side: Black,
                remaining: 0,
                now: 13_000,
            },
            ClockError::ZeroRemaining,
        ),
        (
            ClockOp::AddTime {
                side: White,
                amount: Millis::MAX,
                now: 13_000,
            },
            ClockError::Overflow,
        ),
        (
            ClockOp::Press {
                side: Black,
                now: 11_999,
            },
            ClockError::TimeWentBack {
                now: 11_999,
                last: 12_000,
            },
        ),
        (
            ClockOp::Press {
                side: Black,
                now: 72_000,
            },
            ClockError::FlagFell(Flag {
                side: Black,
                at: 72_000,
                cause: FlagCause::TimeExpired,
            }),
        ),
    ];
    for (op, expected) in cases {
        let before = clock.clone();
        assert_eq!(clock.apply(op), Err(expected), "{op:?}");
        assert_eq!(clock, before, "{op:?} changed the clock");
    }
    let mut fresh = Clock::new(tc("1m"));
    let before = fresh.clone();
    assert_eq!(fresh.press(White, 0), Err(ClockError::NotStarted));
    assert_eq!(fresh.pause(0), Err(ClockError::NotStarted));
    assert_eq!(fresh.resume(0), Err(ClockError::NotStarted));
    assert_eq!(fresh, before);
    assert_eq!(
        ClockError::TimeWentBack { now: 5, last: 9 }.to_string(),
        "instant 5 ms is before the last operation at 9 ms"
    );
}

#[test]
fn queries_before_the_last_operation_see_the_clock_as_at_that_operation() {
    let mut clock = started("1m", White, 10_000);
    clock.press(White, 20_000).expect("in time");
    assert_eq!(clock.remaining(Black, 0), 60_000);
    assert_eq!(clock.remaining(White, 0), 50_000);
    assert_eq!(clock.ledger(Black, 0).charged, 0);
}

#[test]
fn huge_instants_do_not_panic() {
    let mut clock = started("1m", White, Millis::MAX - 10);
    assert_eq!(
        clock.flag_time(Millis::MAX),
        None,
        "beyond the last instant"
    );
    assert_eq!(clock.next_deadline(Millis::MAX), None);
    assert_eq!(clock.remaining(White, Millis::MAX), 60_000 - 10);
    clock.press(White, Millis::MAX).expect("in time");
    assert_eq!(clock.remaining(Black, Millis::MAX), 60_000);
    assert_eq!(clock.settle(Millis::MAX), Ok(vec![]));
}

// ---------------------------------------------------------------- replay

#[test]
fn a_clock_replayed_from_its_log_equals_the_live_one() {
    let control = tc("2m/2+1s,1m d2s; move-limit 50s+10s");
    let mut live = Clock::new(control.clone());
    let ops = [
        ClockOp::SetRemaining {
            side: Black,
            remaining: 100_000,
            now: 0,
        },
        ClockOp::Start {
            side: White,
            now: 1_000,
        },
        ClockOp::Press {
            side: White,
            now: 5_000,
        },
        ClockOp::Pause { now: 6_000 },
        ClockOp::AddTime {
            side: Black,
            amount: 10_000,
            now: 7_000,
        },
        ClockOp::Resume { now: 9_000 },
        ClockOp::Press {
            side: Black,
            now: 50_000,
        },
        ClockOp::SubtractTime {
            side: Black,
            amount: 5_000,
            now: 51_000,
        },
        ClockOp::Press {
            side: White,
            now: 52_000,
        },
        ClockOp::Settle { now: 150_000 },
    ];
    let mut log = Vec::new();
    for op in ops {
        live.apply(op).expect("accepted");
        log.push(op);
    }
    assert_eq!(Clock::replay(control, log), Ok(live));
}

// ---------------------------------------------------------------- properties

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Controls that exercise every feature at a scale where random play reaches flags,
    /// periods, calls and delays.
    const CONTROLS: &[&str] = &[
        "10s",
        "10s+2s",
        "10s+2s; inc-at-start",
        "10s d3s",
        "10s b3s",
        "0s d2s",
        "5s/2+1s,3s/1,4s d1s",
        "5s/2,3s b1s; dgt",
        "1s/1,1s/1,2s+500ms; dgt",
        "20s; move-limit 3s+1s",
        "4s/3",
        "6s/2 b2s,4s+1s; move-limit 4s+2s",
    ];

    /// (kind, time step, side choice, amount). Presses mostly come from the running side.
    fn op_strategy() -> impl Strategy<Value = (u8, u64, u8, u64)> {
        (
            0u8..20,
            prop_oneof![
                4 => 0u64..3_000,
                1 => Just(0u64),
                1 => 0u64..100,
                1 => 5_000u64..30_000,
            ],
            0u8..10,
            prop_oneof![1 => Just(0u64), 5 => 1u64..20_000],
        )
    }

    fn make_op(kind: u8, now: Millis, choice: u8, amount: u64, clock: &Clock) -> ClockOp {
        let side = match clock.phase(now) {
            Phase::Running(s) | Phase::Paused(s) if choice < 8 => s,
            _ if choice.is_multiple_of(2) => White,
            _ => Black,
        };
        match kind {
            0 => ClockOp::Start { side, now },
            1..=10 => ClockOp::Press { side, now },
            11 => ClockOp::Pause { now },
            12 | 13 => ClockOp::Resume { now },
            14 => ClockOp::SetRemaining {
                side,
                remaining: amount,
                now,
            },
            15 => ClockOp::AddTime { side, amount, now },
            16 => ClockOp::SubtractTime { side, amount, now },
            _ if choice == 0 => ClockOp::Stop { now },
            _ => ClockOp::Settle { now },
        }
    }

    /// An independent account of running time, from the accepted operations only.
    #[derive(Default)]
    struct RunModel {
        closed: Millis,
        open_since: Option<Millis>,
    }

    impl RunModel {
        fn accept(&mut self, op: ClockOp) {
            match op {
                ClockOp::Start { now, .. } | ClockOp::Resume { now } => {
                    self.open_since = Some(now);
                }
                ClockOp::Pause { now } | ClockOp::Stop { now } => {
                    if let Some(s) = self.open_since.take() {
                        self.closed += now - s;
                    }
                }
                _ => {}
            }
        }

        /// Running time at `t`: an open span ends at the flag if one fell.
        fn at(&self, t: Millis, flag: Option<Flag>) -> Millis {
            match (self.open_since, flag) {
                (Some(s), Some(f)) => self.closed + (f.at - s),
                (Some(s), None) => self.closed + (t - s),
                (None, _) => self.closed,
            }
        }
    }

    fn check_conservation(clock: &Clock, model: &RunModel, t: Millis) {
        let mut running = 0;
        for side in Side::BOTH {
            let l = clock.ledger(side, t);
            assert_eq!(
                l.balance(),
                Some(clock.remaining(side, t)),
                "{side} at {t}: {l:?}"
            );
            running += l.charged + l.exempt;
        }
        assert_eq!(running, model.at(t, clock.flag(t)), "running time at {t}");
        // The same running time, move by move.
        let moves: Millis = Side::BOTH
            .iter()
            .map(|&s| clock.move_times(s).iter().sum::<Millis>())
            .sum();
        assert_eq!(moves + clock.move_elapsed(t), running, "move times at {t}");
        for side in Side::BOTH {
            assert_eq!(clock.moves(side) as usize, clock.move_times(side).len());
        }
        if let Some(flag) = clock.flag(t) {
            if flag.cause == FlagCause::TimeExpired {
                assert_eq!(clock.remaining(flag.side, t), 0, "frozen at zero");
            }
            assert!(flag.at <= t);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 512,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// Random operations: errors change nothing; the ledger balances and accounts
        /// for every millisecond of running time; remaining time between operations
        /// only goes down, except by DGT periods; a delayed move never raises its
        /// player's time; replaying the accepted operations gives the same clock.
        #[test]
        fn random_operations_conserve_time_and_replay(
            control in proptest::sample::select(CONTROLS),
            first in proptest::option::weighted(0.9, any::<bool>()),
            raw in proptest::collection::vec(op_strategy(), 0..60),
        ) {
            let control = tc(control);
            let delay_only = control
                .periods()
                .iter()
                .all(|p| matches!(p.bonus, Bonus::Delay(_) | Bonus::Bronstein(_)))
                && control.periods().len() == 1;
            let mut clock = Clock::new(control.clone());
            let mut log = Vec::new();
            let mut model = RunModel::default();
            let mut now: Millis = 0;
            let mut move_start: [Option<Millis>; 2] = [None, None];
            let opening = first.map(|white| (0u8, 0u64, if white { 8 } else { 9 }, 0u64));
            for (kind, dt, choice, amount) in opening.into_iter().chain(raw) {
                // Occasionally an instant in the past.
                let at = if dt == 1 { now.saturating_sub(5) } else { now + dt };
                let op = make_op(kind, at, choice, amount, &clock);
                let before = clock.clone();
                // `reading` is phase, remaining and period at once, at any instant.
                for t in [at, at.saturating_add(7_919), at.saturating_sub(3)] {
                    let r = clock.reading(t);
                    prop_assert_eq!(r.phase, clock.phase(t));
                    prop_assert_eq!(r.remaining, Side::BOTH.map(|s| clock.remaining(s, t)));
                    prop_assert_eq!(r.periods, Side::BOTH.map(|s| clock.period(s, t)));
                    let settled = clock.clone().settle(t).is_ok_and(|e| !e.is_empty());
                    prop_assert_eq!(clock.settles(t), settled);
                }
                let before_rem = Side::BOTH.map(|s| clock.remaining(s, at));
                let predicted = clock.reading_after(op);
                match clock.apply(op) {
                    Err(e) => {
                        prop_assert_eq!(&clock, &before);
                        prop_assert_eq!(predicted, Err(e));
                    }
                    Ok(_) => {
                        // `reading_after` saw the clock as `apply` left it.
                        prop_assert_eq!(predicted, Ok(clock.reading(at)));
                        now = at;
                        log.push(op);
                        model.accept(op);
                        match op {
                            ClockOp::Start { .. } | ClockOp::Press { .. } => {
                                if let ClockOp::Press { side, .. } = op {
                                    match move_start[side.index_for_test()] {
                                        Some(r0) if delay_only => {
                                            prop_assert!(clock.remaining(side, now) <= r0);
                                        }
                                        _ => {}
                                    }
                                }
                                if let Phase::Running(mover) = clock.phase(now) {
                                    move_start[mover.index_for_test()] =
                                        Some(clock.remaining(mover, now));
                                }
                            }
                            ClockOp::SetRemaining { .. }
                            | ClockOp::AddTime { .. }
                            | ClockOp::SubtractTime { .. } => move_start = [None, None],
                            _ => {}
                        }
                        if matches!(op, ClockOp::Settle { .. }) {
                            // Settle records what queries already saw.
                            for (i, s) in Side::BOTH.into_iter().enumerate() {
                                prop_assert_eq!(clock.remaining(s, now), before_rem[i]);
                            }
                        }
                    }
                }
                check_conservation(&clock, &model, now);
                // Between operations time only runs down (DGT periods aside).
                let later = now + 3_000;
                for side in Side::BOTH {
                    let gained = clock.ledger(side, later).periods
                        - clock.ledger(side, now).periods;
                    prop_assert!(
                        clock.remaining(side, later) <= clock.remaining(side, now) + gained
                    );
                }
                check_conservation(&clock, &model, later);
            }
            let replayed = Clock::replay(control, log.iter().copied());
            prop_assert_eq!(replayed, Ok(clock));
        }
    }

    trait IndexForTest {
        fn index_for_test(self) -> usize;
    }

    impl IndexForTest for Side {
        fn index_for_test(self) -> usize {
            match self {
                White => 0,
                Black => 1,
            }
        }
    }

    /// A period's time: more than 0, at most the limit (both ends included).
    fn duration() -> impl Strategy<Value = Millis> {
        prop_oneof![
            (1u64..=168).prop_map(|h| h * H),
            (1u64..600).prop_map(|m| m * MIN),
            (1u64..10_000).prop_map(|s| s * S),
            1u64..10_000_000,
            Just(MAX_PERIOD_TIME),
            Just(1),
        ]
    }

    /// An increment or delay: 0 to the limit.
    fn short() -> impl Strategy<Value = Millis> {
        prop_oneof![
            (0u64..=60).prop_map(|m| m * MIN),
            (0u64..3_600).prop_map(|s| s * S),
            0u64..=MAX_BONUS,
            Just(MAX_BONUS),
        ]
    }

    fn bonus() -> impl Strategy<Value = Bonus> {
        prop_oneof![
            Just(Bonus::None),
            short().prop_map(Bonus::Increment),
            short().prop_map(Bonus::Delay),
            short().prop_map(Bonus::Bronstein),
        ]
    }

    fn moves() -> impl Strategy<Value = u32> {
        prop_oneof![1u32..200, Just(MAX_MOVES)]
    }

    fn control() -> impl Strategy<Value = TimeControl> {
        (
            proptest::collection::vec((moves(), duration(), bonus()), 0..3),
            (proptest::option::of(moves()), duration(), bonus()),
            any::<bool>(),
            any::<bool>(),
            proptest::option::of((1u64..=MAX_MOVE_LIMIT, short())),
        )
            .prop_map(|(counted, (moves, time, bonus), at_start, dgt, limit)| {
                let mut periods: Vec<Period> = counted
                    .into_iter()
                    .map(|(n, t, b)| period(Some(n), t, b))
                    .collect();
                periods.push(period(moves, time, bonus));
                let options = Options {
                    increment_at_start: at_start,
                    period_on_flag: dgt && moves.is_none(),
                    move_limit: limit.map(|(limit, allowance)| MoveLimit { limit, allowance }),
                };
                TimeControl::new(periods, options).expect("valid by construction")
            })
    }

    /// Writes a duration as a person might in the proto's style: `h`, `min`, `s`, `ms`
    /// parts, largest first (`1h30min15s`), or plain seconds when `bare` and whole.
    fn spelled(ms: Millis, bare: bool) -> String {
        if bare && ms.is_multiple_of(S) && ms > 0 {
            return (ms / S).to_string();
        }
        let mut out = String::new();
        let mut rest = ms;
        for (size, unit) in [(H, "h"), (MIN, "min"), (S, "s"), (1, "ms")] {
            if rest >= size {
                out.push_str(&format!("{}{unit}", rest / size));
                rest %= size;
            }
        }
        if out.is_empty() {
            out.push_str("0s");
        }
        out
    }

    /// The proto comment's style: ` then ` between periods, `min`, spaces around `+`.
    fn proto_style(tc: &TimeControl, bare: bool) -> String {
        let mut parts = Vec::new();
        for p in tc.periods() {
            let mut s = spelled(p.time, false);
            if let Some(n) = p.moves {
                s.push_str(&format!("/{n}"));
            }
            match p.bonus {
                Bonus::None => {}
                Bonus::Increment(t) => s.push_str(&format!(" + {}", spelled(t, bare))),
                Bonus::Delay(t) => s.push_str(&format!(" d{}", spelled(t, bare))),
                Bonus::Bronstein(t) => s.push_str(&format!(" b {}", spelled(t, bare))),
            }
            parts.push(s);
        }
        let mut out = parts.join(" then ");
        let o = tc.options();
        if let Some(m) = o.move_limit {
            out.push_str(&format!(
                " ; move-limit {} + {}",
                spelled(m.limit, false),
                spelled(m.allowance, false)
            ));
        }
        if o.period_on_flag {
            out.push_str(";dgt");
        }
        if o.increment_at_start {
            out.push_str("; inc-at-start");
        }
        out
    }

    fn pdn_control() -> impl Strategy<Value = TimeControl> {
        let secs = (1u64..100_000).prop_map(|s| s * S);
        let bonus = prop_oneof![
            Just(Bonus::None),
            (0u64..100).prop_map(|s| Bonus::Increment(s * S)),
        ];
        (
            proptest::collection::vec((moves(), secs.clone(), bonus.clone()), 0..3),
            (proptest::option::of(moves()), secs, bonus),
        )
            .prop_map(|(counted, (moves, time, bonus))| {
                let mut periods: Vec<Period> = counted
                    .into_iter()
                    .map(|(n, t, b)| period(Some(n), t, b))
                    .collect();
                periods.push(period(moves, time, bonus));
                TimeControl::new(periods, Options::default()).expect("valid by construction")
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn friendly_form_round_trips(tc in control()) {
            let printed = tc.to_string();
            prop_assert_eq!(printed.parse::<TimeControl>(), Ok(tc), "{}", printed);
        }

        #[test]
        fn proto_style_parses_to_the_same_control(tc in control(), bare in any::<bool>()) {
            let written = proto_style(&tc, bare);
            prop_assert_eq!(written.parse::<TimeControl>(), Ok(tc), "{}", written);
        }

        #[test]
        fn errors_point_inside_the_input(s in "[0-9hminst+/:,; dbx*?-]{0,32}") {
            if let Err(e) = s.parse::<TimeControl>() {
                prop_assert!(e.position <= s.len(), "{:?}: {}", s, e);
                let prefix = format!("at byte {}: ", e.position);
                prop_assert!(e.to_string().starts_with(&prefix), "{}", e);
            }
        }

        #[test]
        fn pdn_form_round_trips(tc in pdn_control()) {
            let printed = tc.pdn().expect("expressible").to_string();
            prop_assert_eq!(TimeControl::from_pdn(&printed), Ok(tc.clone()), "{}", &printed);
            prop_assert_eq!(
                printed.parse::<PdnTimeControl>(),
                Ok(PdnTimeControl::Timed(tc.clone()))
            );
            // The friendly parser reads PDN tags too.
            prop_assert_eq!(printed.parse::<TimeControl>(), Ok(tc));
        }

        #[test]
        fn parsing_never_panics_and_what_parses_reprints_stably(
            s in "[0-9hms+/:,; dbx*?-]{0,24}|.{0,24}"
        ) {
            if let Ok(tc) = s.parse::<TimeControl>() {
                let printed = tc.to_string();
                prop_assert_eq!(printed.parse::<TimeControl>(), Ok(tc));
            }
            if let Ok(tc) = TimeControl::from_pdn(&s) {
                prop_assert_eq!(s.parse::<TimeControl>(), Ok(tc));
            }
        }
    }
}

/// The limits apply to new controls only: a control read back from a log (serde) is
/// not refused by them, so a game recorded before they existed still replays.
#[test]
fn a_recorded_control_over_the_limits_still_reads_back() {
    for text in ["200h", "2h/5000,1h", "90m+2h"] {
        assert!(
            text.parse::<draughts_arbiter::clock::TimeControl>()
                .is_err(),
            "{text}: refused as new input"
        );
        let read: draughts_arbiter::clock::TimeControl =
            serde_json::from_str(&format!("\"{text}\"")).expect("a recorded control reads back");
        assert_eq!(
            serde_json::to_string(&read).expect("writes"),
            format!("\"{text}\""),
            "{text}"
        );
    }
    // What never was a control stays refused.
    assert!(serde_json::from_str::<draughts_arbiter::clock::TimeControl>("\"2h/0\"").is_err());
}
