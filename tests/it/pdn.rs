//! PDN reader and writer: real tournament files, every syntax item, errors
//! with their positions, and the write → read round trip.

use draughts_arbiter::notation::pdn::{
    PdnError, PdnGame, PdnMove, PdnResult, is_move_text, ordered_tags, read_games,
    read_games_bytes, write_game, write_games,
};
use proptest::prelude::*;

macro_rules! game_file {
    ($name:literal) => {
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/games/", $name)
    };
}

/// Reads a data file through the byte reader; every game must read.
fn read_file(path: &str) -> Vec<PdnGame> {
    let bytes = std::fs::read(path).expect("test data file is readable");
    read_games_bytes(&bytes)
        .into_iter()
        .enumerate()
        .map(|(i, game)| game.unwrap_or_else(|e| panic!("{path}: game {}: {e}", i + 1)))
        .collect()
}

/// Reads a text that must hold exactly one valid game.
fn one(text: &str) -> PdnGame {
    let mut games = read_games(text);
    assert_eq!(games.len(), 1, "{text:?} gives {games:?}");
    games.remove(0).expect("a valid game")
}

/// Reads a text whose first game must fail.
fn error(text: &str) -> PdnError {
    read_games(text)
        .into_iter()
        .next()
        .expect("at least one game")
        .expect_err("an error")
}

fn texts(moves: &[PdnMove]) -> Vec<&str> {
    moves.iter().map(|m| m.text.as_str()).collect()
}

fn count_moves(moves: &[PdnMove]) -> usize {
    moves.len()
}

/// The game as the writer orders it, without positions.
fn normalized(game: &PdnGame) -> PdnGame {
    let mut game = game.clone();
    game.clear_positions();
    game.tags = ordered_tags(&game.tags).into_iter().cloned().collect();
    game
}

/// Writes the game, reads it back, and checks that nothing changed and that
/// movetext lines are at most 80 characters (unless one word is longer, or
/// the line ends with a `;` comment, which cannot be wrapped).
fn assert_round_trip(game: &PdnGame) {
    let text = write_game(game);
    let mut back = read_games(&text);
    assert_eq!(back.len(), 1, "{text}");
    let back = back.remove(0).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(normalized(&back), normalized(game), "{text}");
    assert_eq!(write_game(&back), text);
    for line in text.lines().filter(|l| !l.starts_with('[')) {
        let width = line.chars().count();
        assert!(
            width <= 80 || !line.contains(' ') || line.contains("; "),
            "line of {width} characters: {line}"
        );
    }
}

/// Checks what every data file must satisfy: the game count, moves in every
/// game, results agreeing with the result tag, and the round trip.
fn check_file(games: &[PdnGame], count: usize, result_tag: &str) {
    assert_eq!(games.len(), count);
    for game in games {
        assert!(!game.moves.is_empty(), "game at line {}", game.start_line);
        let tag = game.tag(result_tag).expect("a result tag");
        assert_eq!(
            game.result,
            Some(PdnResult::from_token(tag).expect("a result in the tag")),
            "game at line {}",
            game.start_line
        );
        assert_eq!(game.result_text.as_deref(), Some(tag));
        assert_round_trip(game);
    }
    let text = write_games(games);
    let back: Vec<PdnGame> = read_games(&text)
        .into_iter()
        .map(|g| g.expect("written games read back"))
        .collect();
    assert_eq!(
        back.iter().map(normalized).collect::<Vec<_>>(),
        games.iter().map(normalized).collect::<Vec<_>>()
    );
}

// ---------------------------------------------------------------------------
// Real files (tests/data/games/README.md)
// ---------------------------------------------------------------------------

#[test]
fn abatsiev_russian_championship_games() {
    let games = read_file(game_file!("abatsiev.pdn"));
    // 56 `[Event` tag sections (grep -c '^\[Event').
    check_file(&games, 56, "Result");
    let first = &games[0];
    assert_eq!(first.start_line, 1);
    assert_eq!(first.tag("Event"), Some("XXV первенство СССР"));
    assert_eq!(first.tag("site"), Some("Лиепая"));
    assert_eq!(first.tag("Opening"), Some("Новоленинградская защита"));
    assert_eq!(first.moves[0].text, "c3-d4");
    assert_eq!(first.moves[0].number, Some(1));
    assert_eq!((first.moves[0].line, first.moves[0].column), (9, 4));
    assert_eq!(first.moves[1].text, "f6-g5");
    assert_eq!(first.moves[1].number, None);
    assert_eq!(first.moves.last().expect("moves").text, "d8-f6");
    assert_eq!(first.moves.len(), 83);
    assert_eq!(first.result, Some(PdnResult::WhiteWins));
    // Wrapped, but never between a move number and its move.
    let written = write_game(first);
    assert!(written.lines().all(|l| !l.ends_with('.')), "{written}");
    let last = games.last().expect("games");
    assert_eq!(last.tag("Black"), Some("Петров В.А."));
    assert_eq!(last.moves[0].text, "e3-d4");
    assert_eq!(last.moves.last().expect("moves").text, "d2-e3");
    assert_eq!(last.result, Some(PdnResult::Draw));
    // The 1973 game against Lebedev is given as `1. - - 2. - - ... 25. - -`:
    // 50 unknown moves and the result.
    let lebedev = games
        .iter()
        .find(|g| g.tag("Black") == Some("Лебедев Ю."))
        .expect("the Lebedev game");
    assert_eq!(lebedev.start_line, 587);
    assert_eq!(lebedev.moves.len(), 50);
    assert!(lebedev.moves.iter().all(PdnMove::is_unknown));
    assert_eq!(lebedev.moves[48].number, Some(25));
    assert_eq!(
        games
            .iter()
            .filter(|g| g.moves.iter().any(PdnMove::is_unknown))
            .count(),
        1
    );
    // 2,648 moves counted with a regular expression, plus the 50 unknown.
    let total: usize = games.iter().map(|g| count_moves(&g.moves)).sum();
    assert_eq!(total, 2698);
}

#[test]
fn nk2003_amsterdam_international_games() {
    let mut games = read_file(game_file!("nk2003-amsterdam.pdn"));
    // 33 `[Event` tag sections; the last one stops after its tags.
    assert_eq!(games.len(), 33);
    let truncated = games.pop().expect("games");
    assert_eq!(truncated.start_line, 812);
    assert_eq!(truncated.tag("White"), Some("Auke Scholma"));
    assert_eq!(truncated.tag("Result"), Some("1-0"));
    assert!(truncated.moves.is_empty());
    assert_eq!(truncated.result, None);
    assert_round_trip(&truncated);
    check_file(&games, 32, "Result");
    assert!(games.iter().all(|g| g.game_type() == Some(20)));
    let first = &games[0];
    assert_eq!(first.tag("Date"), Some("2003.03.??"));
    assert_eq!(first.moves[0].text, "33-29");
    assert_eq!(first.moves.last().expect("moves").text, "36x27");
    assert_eq!(first.result, Some(PdnResult::Draw));
    let last = games.last().expect("games");
    assert_eq!(
        (last.tag("White"), last.tag("Black")),
        (Some("Ron Heusdens"), Some("Alex Mathijsen"))
    );
    assert_eq!(last.moves[0].text, "32-28");
    assert_eq!(last.moves.last().expect("moves").text, "21x1");
    assert_eq!(last.result, Some(PdnResult::WhiteWins));
    let total: usize = games.iter().map(|g| count_moves(&g.moves)).sum();
    assert_eq!(total, 3268);
}

#[test]
fn oca_2_0_english_checkers_archive() {
    let games = read_file(game_file!("OCA_2.0.pdn"));
    // 43 `[Event` tag sections, movetext right after the tags.
    check_file(&games, 43, "Result");
    let first = &games[0];
    assert_eq!(first.tag("Event"), Some("Manchester 1841"));
    assert_eq!(first.moves[0].text, "11-15");
    assert_eq!(first.moves.last().expect("moves").text, "26x17x10x1");
    assert_eq!(first.result, Some(PdnResult::BlackWins));
    let last = games.last().expect("games");
    assert_eq!(last.tag("Event"), Some("Newcastle 1849, game 8"));
    assert_eq!(last.moves[0].text, "11-15");
    assert_eq!(last.moves.last().expect("moves").text, "16-19");
    assert_eq!(last.result, Some(PdnResult::Draw));
    let total: usize = games.iter().map(|g| count_moves(&g.moves)).sum();
    assert_eq!(total, 2280);
}

#[test]
fn campionato_assoluto_2005_italian_games() {
    let games = read_file(game_file!("Campionato_Assoluto_2005.pdn"));
    // 53 `[Bianco` tag sections; the result tag is `Risultato`.
    check_file(&games, 53, "Risultato");
    let first = &games[0];
    assert_eq!(first.tag("Dati"), Some("69° ASSOLUTO 1° TURNO"));
    assert_eq!(first.moves[0].text, "21-17");
    let last_move = first.moves.last().expect("moves");
    assert_eq!(last_move.text, "6-11");
    assert_eq!(last_move.number, Some(38));
    assert_eq!(last_move.comments, ["Bianco Vince"]);
    assert_eq!(first.result, Some(PdnResult::WhiteWins));
    let last = games.last().expect("games");
    assert_eq!(last.tag("Bianco"), Some("CHINELLATO Giovanni"));
    assert_eq!(last.moves[0].text, "21-17");
    let last_move = last.moves.last().expect("moves");
    assert_eq!(last_move.text, "18x27");
    assert_eq!(last_move.comments, ["Pari"]);
    assert_eq!(last.result, Some(PdnResult::Draw));
    let total: usize = games.iter().map(|g| count_moves(&g.moves)).sum();
    assert_eq!(total, 3227);
}

// ---------------------------------------------------------------------------
// Tags
// ---------------------------------------------------------------------------

#[test]
fn tags_with_any_spacing_escapes_and_case_insensitive_lookup() {
    let game = one(concat!(
        "[Event       \"XXV первенство СССР\"]\n",
        "[  Site\t\"Moscow\"  ]\n",
        "[Annotator \"say \\\"hi\\\" \\\\ C:\\games\"]\n",
        "[Round 5]\n",
        "\n1. 32-28 *\n"
    ));
    assert_eq!(game.tag("event"), Some("XXV первенство СССР"));
    assert_eq!(game.tag("SITE"), Some("Moscow"));
    assert_eq!(game.tag("Annotator"), Some("say \"hi\" \\ C:\\games"));
    assert_eq!(game.tag("Round"), Some("5"));
    assert_eq!(game.tags.len(), 4);
    assert_eq!(game.tag("White"), None);
    // The first of two tags with one name answers (a repeated name read from a file
    // opens the next game instead, see header_only_entry_…).
    let mut game = game;
    game.tags.push(("EVENT".into(), "second".into()));
    assert_eq!(game.tag("event"), Some("XXV первенство СССР"));
}

#[test]
fn several_tags_on_one_line() {
    let game = one("[White \"A\"][Black \"B\"] [Result \"0-2\"]\n1. 32-28 0-2");
    assert_eq!(game.tag("Black"), Some("B"));
    assert_eq!(game.result_tag(), Some(PdnResult::BlackWins));
    assert_eq!(game.result, Some(PdnResult::BlackWins));
}

#[test]
fn game_type_is_the_first_number_of_the_tag() {
    let game = one("[GameType \"20,W,10,10,N2,0\"]\n[FEN \"W:W31-50:B1-20\"]\n1. 32-28 *");
    assert_eq!(game.game_type(), Some(20));
    assert_eq!(game.fen(), Some("W:W31-50:B1-20"));
    assert_eq!(one("[GameType \" 25 \"] *").game_type(), Some(25));
    assert_eq!(one("[GameType \"x\"] *").game_type(), None);
    assert_eq!(one("[Event \"e\"] *").game_type(), None);
}

#[test]
fn set_tag_replaces_or_appends() {
    let mut game = PdnGame::default();
    game.set_tag("Event", "a");
    game.set_tag("event", "b");
    game.set_tag("Site", "c");
    assert_eq!(
        game.tags,
        [("Event".into(), "b".into()), ("Site".into(), "c".into())]
    );
}

// ---------------------------------------------------------------------------
// Movetext
// ---------------------------------------------------------------------------

#[test]
fn algebraic_and_numeric_moves() {
    let game =
        one("1. c3-d4 f6-g5 2. e3xc5 b6:d4 3. e3:c5:e7 a1xh8 4. 32-27 22x15x6 5. 12x19  1-5 *");
    assert_eq!(
        texts(&game.moves),
        [
            "c3-d4", "f6-g5", "e3xc5", "b6:d4", "e3:c5:e7", "a1xh8", "32-27", "22x15x6", "12x19",
            "1-5"
        ]
    );
    assert_eq!(game.moves[9].column, 76);
}

#[test]
fn move_text_shapes() {
    for good in [
        "32-28", "c3-d4", "22x15x6", "e3:c5:e7", "1-5", "a1xh8", "j10-i9", "05X10",
    ] {
        assert!(is_move_text(good), "{good}");
    }
    for bad in [
        "32", "-", "32-", "-28", "32--28", "123-4", "c3d4", "1/2", "ход", "32-28x",
    ] {
        assert!(!is_move_text(bad), "{bad}");
    }
}

#[test]
fn move_numbers_in_every_shape() {
    let game = one("1. 32-28 19-23 2.28x19 3 . 14x23 4... 37-32 5. ... 9-14 31-26");
    let numbers: Vec<_> = game.moves.iter().map(|m| (m.number, m.ellipsis)).collect();
    assert_eq!(
        numbers,
        [
            (Some(1), false),
            (None, false),
            (Some(2), false),
            (Some(3), false),
            (Some(4), true),
            (Some(5), true),
            (None, false),
        ]
    );
    assert_eq!(texts(&game.moves)[6], "31-26");
    let game = one("1… 19-23");
    assert_eq!(
        (game.moves[0].number, game.moves[0].ellipsis),
        (Some(1), true)
    );
}

#[test]
fn moves_without_numbers() {
    let game = one("32-28 19-23 28x19 14x23 2-0");
    assert_eq!(texts(&game.moves), ["32-28", "19-23", "28x19", "14x23"]);
    assert!(game.moves.iter().all(|m| m.number.is_none()));
}

#[test]
fn every_result_token_wins_over_move_shapes() {
    for (token, result) in [
        ("1-0", PdnResult::WhiteWins),
        ("2-0", PdnResult::WhiteWins),
        ("0-1", PdnResult::BlackWins),
        ("0-2", PdnResult::BlackWins),
        ("1-1", PdnResult::Draw),
        ("1/2-1/2", PdnResult::Draw),
        ("½-½", PdnResult::Draw),
        ("0-0", PdnResult::DoubleForfeit),
        ("*", PdnResult::Unknown),
    ] {
        let game = one(&format!("[Result \"{token}\"]\n1. 1-5 2-7 {token}"));
        assert_eq!(texts(&game.moves), ["1-5", "2-7"], "{token}");
        assert_eq!(game.result, Some(result), "{token}");
        assert_eq!(game.result_text.as_deref(), Some(token));
        assert_eq!(game.result_tag(), Some(result));
    }
}

#[test]
fn result_alone_on_a_line_far_to_the_right() {
    let game = one(
        "[Event \"e\"]\r\n\r\n1. c3-d4 f6-g5 \r\n\r\n                                     1/2-1/2\r\n\r\n",
    );
    assert_eq!(game.moves.len(), 2);
    assert_eq!(game.result, Some(PdnResult::Draw));
}

#[test]
fn no_result_token() {
    // A dangling move number at the end of a cut-off game is forgiven.
    let game = one("[Result \"1-0\"]\n\n1. 32-28 19-23 2.\n");
    assert_eq!(game.result, None);
    assert_eq!(game.result_text, None);
    assert_eq!(game.result_tag(), Some(PdnResult::WhiteWins));
}

#[test]
fn brace_comments_span_lines_and_are_normalized() {
    let game = one("{opening\n  remark} 1. 32-28 {a  good\r\n move} {second} 19-23 *");
    assert_eq!(game.game_comment.as_deref(), Some("opening remark"));
    assert_eq!(game.moves[0].comments, ["a good move", "second"]);
    assert!(game.moves[1].comments.is_empty());
}

#[test]
fn semicolon_comments_run_to_the_end_of_the_line() {
    let game = one("1. 32-28 ; a {line} comment\n19-23 ;\n*");
    assert_eq!(game.moves[0].comments, ["a {line} comment"]);
    assert!(
        game.moves[1].comments.is_empty(),
        "empty comments are dropped"
    );
    assert_eq!(game.moves[1].line, 2);
}

#[test]
fn comment_between_number_and_move_stays_with_the_previous_move() {
    let game = one("1. 32-28 19-23 2. {now} 28x19 *");
    assert_eq!(game.moves[1].comments, ["now"]);
    assert_eq!(game.moves[2].number, Some(2));
}

#[test]
fn percent_escape_lines_are_ignored() {
    let game = one(
        "%generated by a program\n[Event \"e\"]\n% a remark\n1. 32-28 {50%} 19-23\n%1. 33-29\n*",
    );
    assert_eq!(game.tag("Event"), Some("e"));
    assert_eq!(texts(&game.moves), ["32-28", "19-23"]);
    assert_eq!(game.moves[0].comments, ["50%"]);
    let e = error("1. 32-28 % 19-23 *");
    assert_eq!(
        (e.line, e.column, e.message.as_str()),
        (1, 10, "unexpected character '%'")
    );
}

#[test]
fn nested_variations() {
    let game = one(
        "1. 32-28 (1. 33-29 (1. 31-27 16-21) 17-22 {idea}) (1. 34-30) 19-23 (1... 18-23 2. 28x19) 2. 28x19 *",
    );
    assert_eq!(texts(&game.moves), ["32-28", "19-23", "28x19"]);
    let first = &game.moves[0];
    assert_eq!(first.variations.len(), 2);
    assert_eq!(texts(&first.variations[0]), ["33-29", "17-22"]);
    assert_eq!(
        texts(&first.variations[0][0].variations[0]),
        ["31-27", "16-21"]
    );
    assert_eq!(first.variations[0][1].comments, ["idea"]);
    assert_eq!(texts(&first.variations[1]), ["34-30"]);
    let black = &game.moves[1].variations[0];
    assert_eq!((black[0].number, black[0].ellipsis), (Some(1), true));
    assert_eq!(texts(black), ["18-23", "28x19"]);
}

#[test]
fn comments_at_the_start_of_a_variation() {
    let game = one("1. 32-28 ({better} 1. 33-29 {sharp}) ({only words}) 19-23 *");
    let variation = &game.moves[0].variations[0];
    assert_eq!(variation[0].comments_before, ["better"]);
    assert_eq!(variation[0].comments, ["sharp"]);
    assert_eq!(game.moves[0].variations.len(), 1);
    assert_eq!(game.moves[0].comments, ["only words"]);
}

#[test]
fn nags_and_suffixes() {
    let game =
        one("1. 32-28! 19-23? 2. 28x19!! 14x23?? 3. 37-32!? 23-28?! 4. 33x22 $14 $1 17x28 ! *");
    let nags: Vec<_> = game.moves.iter().map(|m| m.nags.clone()).collect();
    assert_eq!(
        nags,
        [
            vec![1],
            vec![2],
            vec![3],
            vec![4],
            vec![5],
            vec![6],
            vec![14, 1],
            vec![1]
        ]
    );
    assert_eq!(game.moves[0].text, "32-28");
}

#[test]
fn games_separated_by_blank_lines_or_directly_by_tags() {
    let text = "[Event \"a\"]\n1. 32-28 2-0\n\n\n[Event \"b\"]\n1. 33-29\n[Event \"c\"]\n[Site \"s\"]\n\n1. 34-30 *\n";
    let games: Vec<_> = read_games(text)
        .into_iter()
        .map(|g| g.expect("valid"))
        .collect();
    let events: Vec<_> = games.iter().map(|g| g.tag("Event")).collect();
    assert_eq!(events, [Some("a"), Some("b"), Some("c")]);
    assert_eq!(games[1].result, None);
    assert_eq!(games[2].tag("Site"), Some("s"));
    assert_eq!(
        games.iter().map(|g| g.start_line).collect::<Vec<_>>(),
        [1, 5, 7]
    );
}

#[test]
fn tag_sections_separated_by_a_blank_line_are_two_games() {
    let games = read_games("[Event \"a\"]\n[Site \"s\"]\n\n[Event \"b\"]\n1. 32-28 *");
    assert_eq!(games.len(), 2);
    let first = games[0].as_ref().expect("valid");
    assert_eq!(first.tags.len(), 2);
    assert!(first.moves.is_empty());
    assert_eq!(games[1].as_ref().expect("valid").tag("Event"), Some("b"));
}

#[test]
fn header_only_entry_followed_directly_by_the_next_tags_is_a_game_with_no_moves() {
    // PDN 3.0: <game> ::= <tag-section> <movetext-section>, and a database export may
    // write a game's tags with an empty movetext and the next game's tags right after:
    // the repeated tag name opens the next game.
    let text = "[Event \"a\"]\n[White \"W1\"]\n[Result \"1-0\"]\n\
                [Event \"b\"]\n[White \"W2\"]\n\
                [Event \"c\"]\n[White \"W3\"]\n\n1. 32-28 19-23 *\n\
                [EVENT \"d\"]\n[Result \"0-1\"]\n";
    let games: Vec<PdnGame> = read_games(text)
        .into_iter()
        .map(|g| g.expect("valid"))
        .collect();
    let events: Vec<_> = games.iter().map(|g| g.tag("Event")).collect();
    assert_eq!(events, [Some("a"), Some("b"), Some("c"), Some("d")]);
    assert_eq!(
        games.iter().map(|g| g.tags.len()).collect::<Vec<_>>(),
        [3, 2, 2, 2]
    );
    assert_eq!(
        games.iter().map(|g| g.moves.len()).collect::<Vec<_>>(),
        [0, 0, 2, 0]
    );
    assert_eq!(
        games.iter().map(|g| g.start_line).collect::<Vec<_>>(),
        [1, 4, 6, 10]
    );
    assert_eq!(games[0].result, None);
    assert_eq!(games[0].result_tag(), Some(PdnResult::WhiteWins));
    assert_eq!(games[2].result, Some(PdnResult::Unknown));
    for game in &games {
        assert_round_trip(game);
    }
    // Different tag names on separate lines stay one tag section.
    let game = one("[Event \"a\"]\n[Site \"s\"]\n[Round \"1\"]\n1. 32-28 *");
    assert_eq!(game.tags.len(), 3);
}

#[test]
fn padded_squares_and_spaced_moves_of_fixed_width_files() {
    // Dutch-style fixed-width movetext: squares right-aligned in two columns, and
    // captures with spaces around the `x`.
    let text = "[Event \"NK\"]\n\n\
                \x20 1. 32-28 19-23    2. 28x19 14x23\n\
                \x20 3. 31-27  1- 6    4. 47x 9  3x14\n\
                \x20 5. 10- 4 20 - 25  6. 47 x 9\t9 x\t 3\n\
                \x20 7. c3 - d4 - 8. - -  2-0\n";
    let game = one(text);
    assert_eq!(
        texts(&game.moves),
        [
            "32-28", "19-23", "28x19", "14x23", "31-27", "1-6", "47x9", "3x14", "10-4", "20-25",
            "47x9", "9x3", "c3-d4", "-", "-", "-"
        ]
    );
    assert_eq!(
        game.moves.iter().map(|m| m.number).collect::<Vec<_>>(),
        [
            Some(1),
            None,
            Some(2),
            None,
            Some(3),
            None,
            Some(4),
            None,
            Some(5),
            None,
            Some(6),
            None,
            Some(7),
            None,
            Some(8),
            None
        ]
    );
    // A padded move keeps the position of its first character.
    assert_eq!((game.moves[5].line, game.moves[5].column), (4, 13));
    assert_eq!((game.moves[10].line, game.moves[10].column), (5, 24));
    assert_eq!(game.result, Some(PdnResult::WhiteWins));
    assert_round_trip(&game);
    // A result after a padded move stays a result, a move number stays a number.
    let game = one("1. 32 - 28 1-0");
    assert_eq!(texts(&game.moves), ["32-28"]);
    assert_eq!(game.result, Some(PdnResult::WhiteWins));
    let game = one("1. 32-28 - 2. 33-29 *");
    assert_eq!(texts(&game.moves), ["32-28", "-", "33-29"]);
    // A move does not go on over a line break.
    let e = error("1. 32-\n28 *");
    assert_eq!((e.line, e.message.as_str()), (1, "invalid move '32-'"));
}

#[test]
fn games_without_tags() {
    let games = read_games("1. 32-28 19-23 1-0\n1. 33-29 0-1 1. 31-27 {end}\n");
    let games: Vec<_> = games.into_iter().map(|g| g.expect("valid")).collect();
    assert_eq!(games.len(), 3);
    assert!(games.iter().all(|g| g.tags.is_empty()));
    assert_eq!(texts(&games[1].moves), ["33-29"]);
    assert_eq!(games[2].result, None);
    assert_eq!(games[2].moves[0].comments, ["end"]);
    assert_eq!(games[2].start_line, 2);
}

#[test]
fn comments_after_the_result() {
    // They stay with the game when tags or the end follow …
    let games =
        read_games("1. 32-28 1-0 {won on time}\n[Event \"b\"]\n{only a comment} 2-0 {really}");
    let first = games[0].as_ref().expect("valid");
    assert_eq!(first.moves[0].comments, ["won on time"]);
    let second = games[1].as_ref().expect("valid");
    assert_eq!(
        second.game_comment.as_deref(),
        Some("only a comment really")
    );
    // … and open the next game when it has no tags.
    let games = read_games("1. 32-28 1-0\n{game two}\n1. 33-29 *");
    let second = games[1].as_ref().expect("valid");
    assert_eq!(second.start_line, 2);
    assert!(
        games[0].as_ref().expect("valid").moves[0]
            .comments
            .is_empty()
    );
    assert_eq!(second.game_comment.as_deref(), Some("game two"));
}

#[test]
fn crlf_cr_and_mixed_line_ends_count_lines() {
    let game = one("[Event \"e\"]\r\n\r\n1. 32-28\r19-23\n\n2. 28x19\r\n   14x23 *");
    let lines: Vec<_> = game.moves.iter().map(|m| (m.line, m.column)).collect();
    assert_eq!(lines, [(3, 4), (4, 1), (6, 4), (7, 4)]);
}

#[test]
fn bom_in_text_and_in_bytes() {
    let game = one("\u{FEFF}[Event \"e\"]\n1. 32-28 *");
    assert_eq!(game.tag("Event"), Some("e"));
    let games = read_games_bytes(b"\xEF\xBB\xBF[Event \"\xD0\xBF\"]\r\n1. 32-28 *\r\n");
    let game = games[0].as_ref().expect("valid");
    assert_eq!(game.tag("Event"), Some("п"));
    assert_eq!((game.moves[0].line, game.moves[0].column), (2, 4));
}

#[test]
fn windows_1251_bytes() {
    // "Первенство СССР" and a "№" in Windows-1251.
    let bytes = b"[Event \"\xCF\xE5\xF0\xE2\xE5\xED\xF1\xF2\xE2\xEE \xD1\xD1\xD1\xD0 \xB9 5\"]\n1. c3-d4 {\xF5\xEE\xE4} 1-0\n";
    let games = read_games_bytes(bytes);
    let game = games[0].as_ref().expect("valid");
    assert_eq!(game.tag("Event"), Some("Первенство СССР № 5"));
    assert_eq!(game.moves[0].comments, ["ход"]);
    // Every byte decodes to something.
    let all: Vec<u8> = (0..=255).collect();
    assert!(!read_games_bytes(&all).is_empty());
}

#[test]
fn utf16_with_a_byte_order_mark() {
    let text = "[Event \"Ёлка\"]\n1. 32-28 *";
    let mut le = vec![0xFF, 0xFE];
    le.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let mut be = vec![0xFE, 0xFF];
    be.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
    for bytes in [le, be] {
        let games = read_games_bytes(&bytes);
        assert_eq!(games[0].as_ref().expect("valid").tag("Event"), Some("Ёлка"));
    }
}

#[test]
fn trailing_whitespace_and_empty_input() {
    assert!(read_games("").is_empty());
    assert!(read_games(" \r\n\t\n% only an escape line\n{}").is_empty());
    let game = one("[Event \"e\"]   \n1. 32-28   \t\n*   \n\n   ");
    assert_eq!(game.result, Some(PdnResult::Unknown));
}

#[test]
fn unknown_moves_written_as_a_dash() {
    let game = one("1. - - 2. - - 1/2-1/2");
    assert_eq!(game.moves.len(), 4);
    assert!(game.moves.iter().all(PdnMove::is_unknown));
    assert_round_trip(&game);
}

// ---------------------------------------------------------------------------
// Errors: position, message, and recovery at the next tag section
// ---------------------------------------------------------------------------

#[test]
fn error_messages_and_positions() {
    let cases: &[(&str, usize, usize, &str)] = &[
        (
            "1. 32-28 {never closed\n19-23 *",
            1,
            10,
            "unterminated comment",
        ),
        (
            "[Event \"never closed]\n1. 32-28 *",
            1,
            8,
            "unterminated tag value",
        ),
        ("[Event \"e\"\n1. 32-28 *", 1, 1, "unterminated tag"),
        ("[Event \"e\" x]", 1, 12, "expected ']', found 'x'"),
        ("[ \"e\"]", 1, 3, "tag without a name"),
        (
            "1. 32-28\n  19-23 2. 28x19 ход *",
            2,
            18,
            "invalid move 'ход'",
        ),
        ("1. 32-28 # *", 1, 10, "unexpected character '#'"),
        ("1. 32-28 19-23 ] *", 1, 16, "unexpected character ']'"),
        ("1. 32-28 ) *", 1, 10, "unmatched ')'"),
        ("1. 32-28 (1. 33-29\n19-23", 1, 10, "unterminated variation"),
        (
            "1. 32-28 (1. 33-29\n[Event \"x\"]",
            1,
            10,
            "unterminated variation",
        ),
        ("1. (1. 33-29) 32-28 *", 1, 1, "move number without a move"),
        ("(1. 33-29) 32-28 *", 1, 1, "variation before any move"),
        ("$3 32-28 *", 1, 1, "annotation before any move"),
        ("! 32-28 *", 1, 1, "annotation before any move"),
        ("1. 32-28!!! *", 1, 9, "unknown annotation '!!!'"),
        ("1. 32-28 $ *", 1, 10, "expected a number after '$'"),
        (
            "1. 32-28 $99999999999 *",
            1,
            10,
            "annotation '$99999999999' too large",
        ),
        ("12 32-28 *", 1, 1, "move number '12' without '.'"),
        (
            "99999999999. 32-28 *",
            1,
            1,
            "move number '99999999999' too large",
        ),
        ("1. 2. 32-28 *", 1, 1, "move number without a move"),
        ("1. 32-28 . 19-23 *", 1, 10, "unexpected '.'"),
        (
            "1. 32-28 (1. 33-29 1-0) *",
            1,
            20,
            "result inside a variation",
        ),
        (
            "1. 32-28 (1. 33-29 *) *",
            1,
            20,
            "result inside a variation",
        ),
    ];
    for &(text, line, column, message) in cases {
        let e = error(text);
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (line, column, message),
            "{text:?}"
        );
    }
}

#[test]
fn a_move_number_alone_is_not_a_game() {
    let games = read_games("[Event \"e\"] 1-0\n12.");
    assert_eq!(games.len(), 2);
    let e = games[1].as_ref().expect_err("a lone move number");
    assert_eq!(
        (e.line, e.column, e.message.as_str()),
        (2, 1, "move number without a move")
    );
}

#[test]
fn error_display() {
    let e = error("[Event \"e\"]\n\n1. 32-28 {\n");
    assert_eq!(
        e.to_string(),
        "pdn: line 3, column 10: unterminated comment"
    );
}

#[test]
fn too_deep_variations_are_refused() {
    let deep = format!(
        "1. 32-28 {}1. 33-29{} *",
        "(1. 33-29 ".repeat(100),
        ")".repeat(100)
    );
    let e = error(&deep);
    assert_eq!(e.message, "variations nested too deeply");
    let fine = format!("1. 32-28 {}{} *", "(1. 33-29 ".repeat(64), ")".repeat(64));
    assert_round_trip(&one(&fine));
}

#[test]
fn a_bad_game_does_not_stop_the_next() {
    let text = concat!(
        "[Event \"one\"]\n",
        "1. 32-28 {unterminated 19-23\n",
        "\n",
        "[Event \"two\"]\n",
        "[Site \"s\"]\n",
        "1. 33-29 junk! 2-0\n",
        "[Event \"three\"]\n",
        "[Site \"broken\n",
        "[Round \"1\"]\n",
        "1. 34-30 *\n",
        "\n",
        "[Event \"four\"]\n",
        "1. 31-27 *\n",
    );
    let games = read_games(text);
    assert_eq!(games.len(), 4);
    let e = games[0].as_ref().expect_err("unterminated comment");
    assert_eq!((e.line, e.column), (2, 10));
    let e = games[1].as_ref().expect_err("invalid move");
    assert_eq!(
        (e.line, e.column, e.message.as_str()),
        (6, 10, "invalid move 'junk'")
    );
    let e = games[2].as_ref().expect_err("unterminated tag value");
    assert_eq!((e.line, e.column), (8, 7));
    let four = games[3].as_ref().expect("the fourth game reads");
    assert_eq!(four.tag("Event"), Some("four"));
    assert_eq!(four.start_line, 12);
    assert_eq!(texts(&four.moves), ["31-27"]);
}

// ---------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------

#[test]
fn writer_puts_the_seven_tag_roster_first_and_escapes_values() {
    let mut game = PdnGame::default();
    for (name, value) in [
        ("GameType", "20"),
        ("Result", "2-0"),
        ("Black", "B"),
        ("Event", "Say \"hi\" \\o/"),
        ("white", "W"),
        ("Round", "1"),
        ("Date", "2024.05.01"),
        ("Site", "Line\nbreak"),
    ] {
        game.set_tag(name, value);
    }
    game.moves = vec![PdnMove::new("32-28")];
    game.result = Some(PdnResult::WhiteWins);
    game.result_text = Some("2-0".into());
    let text = write_game(&game);
    assert_eq!(
        text,
        concat!(
            "[Event \"Say \\\"hi\\\" \\\\o/\"]\n",
            "[Site \"Line break\"]\n",
            "[Date \"2024.05.01\"]\n",
            "[Round \"1\"]\n",
            "[white \"W\"]\n",
            "[Black \"B\"]\n",
            "[Result \"2-0\"]\n",
            "[GameType \"20\"]\n",
            "\n",
            "32-28 2-0\n"
        )
    );
    assert_eq!(one(&text).tag("Event"), Some("Say \"hi\" \\o/"));
}

#[test]
fn writer_numbers_comments_variations_nags_and_wraps() {
    let mut game = one(concat!(
        "[Event \"e\"]\n",
        "{A long introduction that certainly does not fit on one line of eighty characters, so it wraps}\n",
        "1. 32-28! {good} (1. 33-29 $14 ({first} 1. 34-30) 18-23) 19-23 2. 28x19 ; a } brace\n14x23 ½-½"
    ));
    game.moves[3].comments.push("x".into());
    let text = write_game(&game);
    assert_eq!(
        text,
        concat!(
            "[Event \"e\"]\n",
            "\n",
            "{A long introduction that certainly does not fit on one line of eighty\n",
            "characters, so it wraps} 1. 32-28! {good} (1. 33-29 $14 ({first} 1. 34-30)\n",
            "18-23) 19-23 2. 28x19 ; a } brace\n",
            "14x23 {x} ½-½\n"
        )
    );
    assert_round_trip(&game);
}

/// A `[%clock ...]` command is never split across lines, wherever the line ends;
/// an unclosed `[%` runs to the end of its comment; the text reads back the same.
#[test]
fn writer_keeps_clock_commands_on_one_line() {
    for pad in 60..80 {
        let mut m = PdnMove::new("32-28");
        m.comments = vec![
            "x".repeat(pad),
            "[%clock w0:09:57 B0:09:58] note".into(),
            "[%eval 0.3] [%clk  0:09:57]".into(),
        ];
        let game = PdnGame {
            moves: vec![m],
            result: Some(PdnResult::Unknown),
            ..PdnGame::default()
        };
        let text = write_game(&game);
        assert!(text.contains("{[%clock w0:09:57 B0:09:58] note}"), "{text}");
        assert!(text.contains("[%clk 0:09:57]}"), "{text}");
        let back = one(&text);
        assert_eq!(back.moves[0].comments[1], "[%clock w0:09:57 B0:09:58] note");
    }
    let mut m = PdnMove::new("32-28");
    m.comments = vec!["[%clock w0:09:57 and so on".into()];
    let game = PdnGame {
        moves: vec![m],
        ..PdnGame::default()
    };
    assert_round_trip(&game);
}

#[test]
fn writer_uses_the_canonical_result_when_the_text_disagrees() {
    let game = PdnGame {
        moves: vec![PdnMove::new("c3-d4")],
        result: Some(PdnResult::Draw),
        result_text: Some("1-0".into()),
        ..PdnGame::default()
    };
    assert_eq!(write_game(&game), "c3-d4 1/2-1/2\n");
    let game = PdnGame {
        result: None,
        ..game
    };
    assert_eq!(write_game(&game), "c3-d4\n");
}

#[test]
fn number_moves_for_writing() {
    let mut game = PdnGame {
        moves: ["32-28", "19-23", "28x19", "14x23"]
            .map(PdnMove::new)
            .to_vec(),
        result: Some(PdnResult::Unknown),
        ..PdnGame::default()
    };
    game.number_moves(1, false);
    assert_eq!(write_game(&game), "1. 32-28 19-23 2. 28x19 14x23 *\n");
    game.number_moves(7, true);
    assert_eq!(write_game(&game), "7... 32-28 8. 19-23 28x19 9. 14x23 *\n");
}

#[test]
fn write_games_separates_games_by_blank_lines() {
    let games: Vec<PdnGame> = read_games("[Event \"a\"]\n1. 32-28 *\n[Event \"b\"]\n1. 33-29 *")
        .into_iter()
        .map(|g| g.expect("valid"))
        .collect();
    assert_eq!(
        write_games(&games),
        "[Event \"a\"]\n\n1. 32-28 *\n\n[Event \"b\"]\n\n1. 33-29 *\n"
    );
}

// ---------------------------------------------------------------------------
// Round trip on generated games
// ---------------------------------------------------------------------------

fn comment() -> impl Strategy<Value = String> {
    // Words of any non-space characters, `{`, `}` and `%` included.
    prop::collection::vec("[^\\s]{1,6}|[{}%;\\[]", 1..5).prop_map(|w| w.join(" "))
}

fn move_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[1-9][0-9]?([-x][1-9][0-9]?){1,3}",
        "[a-h][1-8]([-x:][a-h][1-8]){1,3}",
        Just("-".to_owned()),
    ]
    .prop_filter("a result is not a move", |t| {
        PdnResult::from_token(t).is_none()
    })
}

fn number() -> impl Strategy<Value = (Option<u32>, bool)> {
    prop_oneof![
        Just((None, false)),
        (any::<u32>(), any::<bool>()).prop_map(|(n, e)| (Some(n), e)),
    ]
}

fn plain_move() -> impl Strategy<Value = PdnMove> {
    (
        number(),
        move_text(),
        prop::collection::vec(comment(), 0..2),
        prop::collection::vec(prop_oneof![1u32..=6, any::<u32>()], 0..3),
    )
        .prop_map(|((number, ellipsis), text, comments, nags)| PdnMove {
            number,
            ellipsis,
            text,
            comments,
            nags,
            ..PdnMove::default()
        })
}

fn line(depth: u32) -> BoxedStrategy<Vec<PdnMove>> {
    let mv = if depth == 0 {
        plain_move().boxed()
    } else {
        (plain_move(), prop::collection::vec(line(depth - 1), 0..2))
            .prop_map(|(mut m, variations)| {
                m.variations = variations.into_iter().filter(|v| !v.is_empty()).collect();
                m
            })
            .boxed()
    };
    prop::collection::vec(mv, 0..6).boxed()
}

fn variation_line(depth: u32) -> BoxedStrategy<Vec<PdnMove>> {
    (line(depth), prop::collection::vec(comment(), 0..2))
        .prop_map(|(mut moves, before)| {
            if let Some(first) = moves.first_mut() {
                first.comments_before = before;
            }
            moves
        })
        .boxed()
}

fn game() -> impl Strategy<Value = PdnGame> {
    let tag = ("[A-Za-z][A-Za-z0-9_]{0,8}", "[^\r\n]{0,12}");
    let result = prop::sample::select(vec![
        "1-0", "2-0", "0-1", "0-2", "1-1", "1/2-1/2", "½-½", "*", "0-0",
    ]);
    (
        prop::collection::vec(tag, 0..6),
        prop::option::of(comment()),
        prop::collection::vec(
            (plain_move(), prop::collection::vec(variation_line(2), 0..2)),
            0..20,
        ),
        prop::option::of(result),
    )
        .prop_map(|(mut tags, game_comment, moves, result)| {
            // A tag name that comes again opens the next game: one game's names differ.
            let mut seen: Vec<String> = Vec::new();
            tags.retain(|(name, _): &(String, String)| {
                let fresh = !seen.iter().any(|n| n.eq_ignore_ascii_case(name));
                seen.push(name.clone());
                fresh
            });
            PdnGame {
                tags,
                game_comment,
                moves: moves
                    .into_iter()
                    .map(|(mut m, variations)| {
                        m.variations = variations.into_iter().filter(|v| !v.is_empty()).collect();
                        m
                    })
                    .collect(),
                result: result.and_then(PdnResult::from_token),
                result_text: result.map(str::to_owned),
                start_line: 0,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn write_then_read_gives_the_same_game(game in game()) {
        prop_assume!(!game.tags.is_empty() || !game.moves.is_empty()
            || game.result.is_some() || game.game_comment.is_some());
        assert_round_trip(&game);
    }

    #[test]
    fn reading_anything_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        for game in read_games_bytes(&bytes).into_iter().flatten() {
            assert_round_trip(&game);
        }
    }

    #[test]
    fn reading_pdn_like_text_never_panics(text in "[\\[\\]{}()\"%;$!?.*x:/ 0-9a-h\\-\n\r\tEvent½…]{0,200}") {
        for game in read_games(&text).into_iter().flatten() {
            assert_round_trip(&game);
        }
    }
}
