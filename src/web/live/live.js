// The live board page (src/web/live.rs): every board of an event's round, followed over
// grpc-web (`draughts.arbiter.v1.BroadcastService/WatchEvent`) on the page's own origin.
//
// The API is read from the server's FileDescriptorSet at run time (no generated code).
// The page knows no rules, no notation and no board geometry: each event comes with its
// words from the server (`comment`, the record's words, for the arbiter's notes) and,
// when the position changed, the position as it is drawn (`drawing`: the grid, each
// playable square with its place, label and piece). The page keeps per game what it
// shows: those, the score sheet, the clocks and the game's status. After a drop the
// stream is resumed from the `cursor` of the last message; a cursor the server refuses
// (INVALID_ARGUMENT) starts the page over from the round's first event.
//
// On a tournament's event the stream also carries the standings (`standingsUpdated`),
// shown beside the boards. `?view=hall` is the projector mode: every board of the round
// on one screen (the grid chosen for the largest boards that fit), large clocks, the
// standings at the side, paged when they do not fit.
//
// The public needs no token. An arbiter signs in with the header's "sign in" form (the
// token kept in the tab's sessionStorage, sent only as `authorization`; common.js) and
// sees every game live; a `?token=` link is taken out of the address bar at once.

import {
  CLOCK_RUNNING,
  Code,
  ConnectError,
  SCORE,
  SIDE_BLACK,
  SIDE_WHITE,
  STATUS,
  authHeaders,
  clockOf,
  el,
  formatClock,
  loadApi,
  num,
  sleep,
  target,
  timestampMs,
  wireSignIn,
} from "./common.js";

const SVG = "http://www.w3.org/2000/svg";


// ---------------------------------------------------------------------------
// Per game: what the page shows, from the stream's messages
// ---------------------------------------------------------------------------

const games = new Map();
// The tournament's standings as the stream last sent them (`StandingsUpdated`).
let standings = null;
// The projector mode.
const hall = new URLSearchParams(location.search).get("view") === "hall";

function newGame(id) {
  return {
    id,
    white: null,
    black: null,
    event: "",
    round: "",
    board: 0,
    timeControl: "",
    delayMs: 0,
    delayDisproved: false,
    drawing: null,
    first: SIDE_WHITE,
    moves: [],
    clock: null,
    status: 1,
    result: 0,
    resultText: "",
    notes: [],
    lastSeq: 0,
    drawOffer: 0,
  };
}

function applyEvent(ev) {
  if (ev.kind.case === "standingsUpdated") {
    standings = ev.kind.value;
    renderStandings();
    return;
  }
  const id = ev.gameId;
  if (!id) return;
  let g = games.get(id);
  if (!g) {
    g = newGame(id);
    games.set(id, g);
  }
  const seq = num(ev.seq);
  const k = ev.kind;
  if (k.case === "resync") {
    applySnapshot(g, k.value.game, seq);
    return;
  }
  // Folding is idempotent: an event already folded in is not folded again.
  if (seq !== 0 && seq <= g.lastSeq) return;
  g.lastSeq = seq;
  if (ev.serverTime && g.delayMs > 0) {
    // An event that came sooner than the delay: this caller sees the game live.
    const lag = Date.now() - timestampMs(ev.serverTime);
    if (lag < g.delayMs - 1500) g.delayDisproved = true;
  }
  const v = k.value;
  if (ev.drawing) g.drawing = ev.drawing;
  if (v && v.clock) g.clock = clockOf(v.clock);
  switch (k.case) {
    case "gameCreated":
      heading(g, v);
      g.first = ev.drawing ? ev.drawing.turn : SIDE_WHITE;
      g.status = 1;
      break;
    case "gameStarted":
    case "clocksResumed":
      g.status = 2;
      break;
    case "clocksPaused":
      g.status = 3;
      break;
    case "movePlayed":
      g.moves.push({ seq, number: v.moveNumber, side: v.side, notation: v.move ? v.move.notation : "?" });
      g.drawOffer = 0;
      break;
    case "drawOffered":
      g.drawOffer = v.side;
      break;
    case "drawOfferDeclined":
    case "drawOfferAccepted":
      g.drawOffer = 0;
      break;
    case "gameFinished":
      g.status = 4;
      g.result = v.result;
      g.resultText = ev.comment;
      g.drawOffer = 0;
      return;
    default:
      break;
  }
  // The record's comment on the event, if it has one, is one of the arbiter's notes.
  if (ev.comment) g.notes.push({ seq, kind: k.case, text: ev.comment });
}

// The players, event, round, board, time control and delay, from a `GameCreated` or a
// `Game` (their fields have the same names).
function heading(g, from) {
  g.white = from.white || null;
  g.black = from.black || null;
  g.event = from.event;
  g.round = from.round;
  g.board = from.board;
  g.timeControl = from.timeControl;
  g.delayMs = num(from.settings && from.settings.broadcastDelayMs);
}

// A `Resync` (or a fresh start): the game as the server shows it at `seq`.
function applySnapshot(g, game, seq) {
  if (!game) return;
  heading(g, game);
  g.drawing = game.drawing || g.drawing;
  g.status = game.status;
  g.result = game.result;
  g.moves = game.moves.map((m) => ({
    seq: num(m.seq),
    number: m.moveNumber,
    side: m.side,
    notation: m.move ? m.move.notation : "?",
  }));
  // The first move was made by the side to move at the start.
  if (g.moves.length > 0) g.first = g.moves[0].side;
  g.clock = clockOf(game.clock);
  g.drawOffer = game.pendingDrawOffer ? game.pendingDrawOffer.side : 0;
  // The notes already seen stay (they happened).
  g.notes = g.notes.filter((n) => n.seq <= seq);
  g.lastSeq = seq || num(game.lastSeq);
}

// ---------------------------------------------------------------------------
// Drawing
// ---------------------------------------------------------------------------

function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

// The time the page shows: now, or for a delayed public broadcast, the delay ago.
function viewNow(g) {
  return Date.now() - (g.delayMs > 0 && !g.delayDisproved ? g.delayMs : 0);
}

function remaining(g, side) {
  const c = g.clock;
  if (!c) return null;
  let ms = side === SIDE_WHITE ? c.white : c.black;
  if (c.state === CLOCK_RUNNING && c.running === side && g.status === 2) {
    ms -= Math.max(0, viewNow(g) - c.readAt);
  }
  return ms;
}

function untimed(g) {
  return !g.timeControl || g.timeControl === "-" || (g.clock && g.clock.white < 0 && g.clock.black < 0 && g.status !== 4);
}

const PIECE_R = 38;

function drawPiece(group, cx, cy, piece) {
  const colour = piece.white ? "w" : "b";
  const below = piece.beneath.slice(0, 4);
  // Towers: the pieces beneath the top, drawn as discs under it.
  for (let i = below.length; i >= 1; i--) {
    const c = below[i - 1] ? "w" : "b";
    group.appendChild(svg("circle", { cx, cy: cy + 6 * i, r: PIECE_R, class: `disc ${c}` }));
  }
  group.appendChild(svg("circle", { cx: cx + 2, cy: cy + 5, r: PIECE_R, class: "shadow" }));
  group.appendChild(svg("circle", { cx, cy, r: PIECE_R, class: `disc ${colour}` }));
  group.appendChild(svg("circle", { cx, cy, r: PIECE_R - 9, class: `ring ${colour}` }));
  if (piece.king) {
    const crown = svg("path", {
      d: "M-19 9 L-23 -11 L-10 -2 L0 -17 L10 -2 L23 -11 L19 9 Z M-19 13 L19 13 L19 18 L-19 18 Z",
      transform: `translate(${cx} ${cy})`,
      class: `crown ${colour}`,
    });
    group.appendChild(crown);
  }
  if (piece.beneath.length > 0) {
    const t = svg("text", { x: cx + 30, y: cy - 26, class: "stack" });
    t.textContent = String(piece.beneath.length + 1);
    group.appendChild(t);
  }
}

function drawBoard(g) {
  const d = g.drawing;
  const S = 100;
  const w = d ? d.columns : 8;
  const h = d ? d.rows : 8;
  const root = svg("svg", { viewBox: `0 0 ${w * S} ${h * S}`, class: "board", role: "img" });
  if (!d) return { root, turn: 0 };
  root.setAttribute("aria-label", `${d.title} position`);
  const playable = new Map(d.squares.map((q) => [`${q.x},${q.y}`, q]));
  const squares = svg("g", {});
  const labels = svg("g", { class: "labels" });
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const q = playable.get(`${x},${y}`);
      const dark = Boolean(q && q.dark);
      squares.appendChild(svg("rect", { x: x * S, y: y * S, width: S, height: S, class: dark ? "sq dark" : "sq light" }));
      if (q && q.lastMove) {
        squares.appendChild(svg("rect", { x: x * S, y: y * S, width: S, height: S, class: `hl ${q.lastMove}` }));
      }
      if (q && q.label) {
        const t = svg("text", { x: x * S + 6, y: y * S + 20, class: "num" });
        t.textContent = q.label;
        labels.appendChild(t);
      }
      const side = dark ? "on-dark" : "on-light";
      if (y === h - 1 && d.files[x]) {
        const t = svg("text", { x: x * S + S - 8, y: y * S + S - 7, class: `coord ${side}`, "text-anchor": "end" });
        t.textContent = d.files[x];
        labels.appendChild(t);
      }
      if (x === 0 && d.ranks[y]) {
        const t = svg("text", { x: 6, y: y * S + 22, class: `coord ${side}` });
        t.textContent = d.ranks[y];
        labels.appendChild(t);
      }
    }
  }
  root.appendChild(squares);
  root.appendChild(labels);
  const pieces = svg("g", { class: "pieces" });
  for (const q of d.squares) {
    if (!q.piece) continue;
    const white = q.piece === SIDE_WHITE;
    const group = svg("g", {
      class: `piece ${white ? "white" : "black"} ${q.king ? "king" : "man"}`,
      "data-cell": `${q.x},${q.y}`,
    });
    const piece = { white, king: q.king, beneath: q.beneath.map((b) => b === SIDE_WHITE) };
    drawPiece(group, q.x * S + S / 2, q.y * S + S / 2 - 2, piece);
    pieces.appendChild(group);
  }
  root.appendChild(pieces);
  return { root, turn: d.turn };
}

function playerRow(g, side, turn) {
  const p = side === SIDE_WHITE ? g.white : g.black;
  const row = el("div", `player ${side === SIDE_WHITE ? "white" : "black"}`);
  row.appendChild(el("span", `dot ${side === SIDE_WHITE ? "w" : "b"}`));
  const who = el("div", "who");
  who.appendChild(el("span", "name", (p && p.name) || (side === SIDE_WHITE ? "White" : "Black")));
  const meta = [p && p.federation, p && p.rating ? String(p.rating) : ""].filter(Boolean).join(" · ");
  if (meta) who.appendChild(el("span", "meta", meta));
  row.appendChild(who);
  if (g.drawOffer === side && g.status !== 4) row.appendChild(el("span", "offer", "offers a draw"));
  const clock = el("span", "clock");
  clock.dataset.side = side === SIDE_WHITE ? "white" : "black";
  if (turn === side && g.status !== 4) row.classList.add("to-move");
  row.appendChild(clock);
  return row;
}

function updateClocks(card, g) {
  for (const clock of card.querySelectorAll(".clock")) {
    const side = clock.dataset.side === "white" ? SIDE_WHITE : SIDE_BLACK;
    if (untimed(g)) {
      clock.textContent = "—";
      clock.dataset.ms = "";
      clock.className = "clock untimed";
      continue;
    }
    const ms = remaining(g, side);
    if (ms === null) {
      clock.textContent = g.timeControl || "—";
      clock.dataset.ms = "";
      clock.className = "clock waiting";
      continue;
    }
    clock.textContent = formatClock(ms);
    clock.dataset.ms = String(Math.round(ms));
    const running = g.clock.state === CLOCK_RUNNING && g.clock.running === side && g.status === 2;
    clock.className = `clock${running ? " running" : ""}${ms < 30000 ? " low" : ""}${ms <= 0 ? " flag" : ""}`;
  }
}

function scoreSheet(g) {
  const list = el("ol", "moves");
  const rows = new Map();
  // The first column is the side that moves first from the start position.
  const first = g.first;
  for (const m of g.moves) {
    let row = rows.get(m.number);
    if (!row) {
      row = el("li", "row");
      row.appendChild(el("span", "no", `${m.number}.`));
      row.appendChild(el("span", "mv empty", "…"));
      row.appendChild(el("span", "mv empty", ""));
      rows.set(m.number, row);
      list.appendChild(row);
    }
    const cell = row.children[m.side === first ? 1 : 2];
    cell.className = "mv";
    cell.textContent = m.notation;
    cell.dataset.seq = String(m.seq);
  }
  const cells = list.querySelectorAll(".mv[data-seq]");
  if (cells.length) cells[cells.length - 1].classList.add("last");
  return list;
}

function resultLine(g) {
  if (g.status !== 4 || !g.result) return null;
  const box = el("div", "result");
  box.appendChild(el("span", "score", SCORE[g.result] || ""));
  if (g.resultText) box.appendChild(el("span", "why", g.resultText));
  return box;
}

function notesList(g) {
  if (g.notes.length === 0) return null;
  const list = el("ul", "notes");
  for (const n of g.notes) list.appendChild(el("li", `note ${n.kind}`, n.text));
  return list;
}

const cards = new Map();

function renderGame(g) {
  let card = cards.get(g.id);
  if (!card) {
    card = el("section", "game");
    card.dataset.gameId = g.id;
    cards.set(g.id, card);
  }
  card.replaceChildren();
  card.dataset.board = String(g.board);
  card.dataset.status = STATUS[g.status] || "";
  const head = el("div", "head");
  head.appendChild(el("span", "boardno", g.board ? `Board ${g.board}` : g.id));
  const info = [g.drawing ? g.drawing.title : "", g.timeControl && g.timeControl !== "-" ? g.timeControl : "untimed"].filter(Boolean);
  if (!round && g.round) info.unshift(`Round ${g.round}`);
  head.appendChild(el("span", "info", info.join(" · ")));
  if (g.delayMs > 0 && !g.delayDisproved) {
    head.appendChild(el("span", "delay", `delayed ${formatDelay(g.delayMs)}`));
  }
  head.appendChild(el("span", `state s${g.status}`, STATUS[g.status] || ""));
  card.appendChild(head);

  const body = el("div", "body");
  const left = el("div", "left");
  const drawn = drawBoard(g);
  left.appendChild(playerRow(g, SIDE_BLACK, drawn.turn));
  const frame = el("div", "frame");
  frame.appendChild(drawn.root);
  left.appendChild(frame);
  left.appendChild(playerRow(g, SIDE_WHITE, drawn.turn));
  body.appendChild(left);

  const right = el("div", "right");
  const result = resultLine(g);
  if (result) right.appendChild(result);
  right.appendChild(el("h3", "", "Moves"));
  const sheet = scoreSheet(g);
  if (g.moves.length === 0) sheet.appendChild(el("li", "none", "no moves yet"));
  right.appendChild(sheet);
  const notes = notesList(g);
  if (notes) {
    right.appendChild(el("h3", "", "Arbiter's notes"));
    right.appendChild(notes);
  }
  body.appendChild(right);
  card.appendChild(body);
  updateClocks(card, g);
  // Keep the latest moves in view.
  requestAnimationFrame(() => {
    sheet.scrollTop = sheet.scrollHeight;
  });
  return card;
}

function formatDelay(ms) {
  if (ms >= 3600000 && ms % 3600000 === 0) return `${ms / 3600000} h`;
  if (ms >= 60000 && ms % 60000 === 0) return `${ms / 60000} min`;
  return `${Math.round(ms / 100) / 10} s`;
}

// ---------------------------------------------------------------------------
// Standings
// ---------------------------------------------------------------------------

// 1.5 as "1½", 0.5 as "½"; other fractions with two decimals.
function points(v) {
  const x = Number(v);
  if (Number.isInteger(x)) return String(x);
  const whole = Math.floor(x);
  if (Math.abs(x - whole - 0.5) < 1e-9) return `${whole > 0 ? whole : ""}½`;
  return x.toFixed(2);
}

let standingsPage = 0;

function renderStandings() {
  const panel = document.getElementById("standings");
  const s = standings && standings.standings;
  if (!s) {
    panel.hidden = true;
    return;
  }
  panel.hidden = false;
  document.body.dataset.standings = standings.finished ? "final" : "live";
  const title = standings.finished ? "Final standings" : s.round > 0 ? `Standings after round ${s.round}` : "Standings";
  const table = el("table", "table");
  const head = el("tr");
  head.appendChild(el("th", "rank", "#"));
  head.appendChild(el("th", "name", "Player"));
  head.appendChild(el("th", "pts", "Pts"));
  head.appendChild(el("th", "n", "G"));
  s.tiebreakNames.forEach((name, i) => {
    const th = el("th", "tb", s.tiebreakAbbreviations[i] || `TB${i + 1}`);
    th.title = name;
    head.appendChild(th);
  });
  const thead = el("thead");
  thead.appendChild(head);
  table.appendChild(thead);
  const body = el("tbody");
  for (const r of s.rows) {
    const tr = el("tr");
    const shared = s.rows.filter((o) => o.rank === r.rank).length > 1;
    tr.appendChild(el("td", "rank", `${r.rank}${shared ? "=" : ""}`));
    const p = r.player || {};
    const who = el("td", "name");
    who.appendChild(el("span", "pname", p.name || "?"));
    if (p.federation) who.appendChild(el("span", "fed", p.federation));
    tr.appendChild(who);
    tr.appendChild(el("td", "pts", points(r.points)));
    tr.appendChild(el("td", "n", String(r.games + r.forfeits)));
    for (const v of r.tiebreaks) tr.appendChild(el("td", "tb", points(v)));
    body.appendChild(tr);
  }
  table.appendChild(body);
  panel.replaceChildren(el("h2", "", title), table);
  pageStandings();
}

// In the hall, the rows that fit, a page at a time.
function pageStandings() {
  const panel = document.getElementById("standings");
  const rows = [...panel.querySelectorAll("tbody tr")];
  if (!hall || rows.length === 0) return;
  for (const r of rows) r.hidden = false;
  const table = panel.querySelector("table");
  const rowHeight = rows[0].getBoundingClientRect().height || 1;
  const room = panel.clientHeight - (table.offsetTop - panel.offsetTop) - rowHeight * 1.5;
  const fit = Math.max(1, Math.floor(room / rowHeight));
  const pages = Math.ceil(rows.length / fit);
  standingsPage = standingsPage % pages;
  rows.forEach((r, i) => {
    r.hidden = Math.floor(i / fit) !== standingsPage;
  });
  panel.dataset.page = pages > 1 ? `${standingsPage + 1}/${pages}` : "";
}

if (hall) {
  setInterval(() => {
    standingsPage += 1;
    pageStandings();
  }, 8000);
}

// ---------------------------------------------------------------------------
// The hall: the grid with the largest boards that fit
// ---------------------------------------------------------------------------

function layoutHall() {
  if (!hall) return;
  const container = document.getElementById("boards");
  const n = Math.max(1, container.children.length);
  const width = container.clientWidth - 16;
  const height = container.clientHeight - 16;
  // Each card: its head, two player rows and a result line around the board.
  const chrome = 168;
  const gap = 12;
  let best = { cols: 1, board: 0 };
  for (let cols = 1; cols <= n; cols++) {
    const rows = Math.ceil(n / cols);
    const cellW = (width - gap * (cols - 1)) / cols;
    const cellH = (height - gap * (rows - 1)) / rows;
    const board = Math.floor(Math.min(cellW - 28, cellH - chrome));
    if (board > best.board) best = { cols, rows, board };
  }
  container.style.setProperty("--cols", String(best.cols));
  container.style.setProperty("--rows", String(best.rows || 1));
  container.style.setProperty("--board", `${Math.max(60, best.board)}px`);
  pageStandings();
}

window.addEventListener("resize", layoutHall);

const dirty = new Set();
let renderQueued = false;

function markDirty(id) {
  dirty.add(id);
  if (!renderQueued) {
    renderQueued = true;
    setTimeout(renderDirty, 0);
  }
}

function renderDirty() {
  renderQueued = false;
  const container = document.getElementById("boards");
  for (const id of dirty) {
    const g = games.get(id);
    if (g) renderGame(g);
  }
  dirty.clear();
  const ordered = [...games.values()].sort(
    (a, b) => a.round.localeCompare(b.round, undefined, { numeric: true }) || a.board - b.board || a.id.localeCompare(b.id),
  );
  const want = ordered.map((g) => cards.get(g.id)).filter(Boolean);
  if (want.length !== container.children.length || want.some((c, i) => container.children[i] !== c)) {
    container.replaceChildren(...want);
    layoutHall();
  }
  document.getElementById("empty").hidden = games.size > 0;
}

function clearAll() {
  standings = null;
  renderStandings();
  games.clear();
  cards.clear();
  dirty.clear();
  document.getElementById("boards").replaceChildren();
  document.getElementById("empty").hidden = false;
}

setInterval(() => {
  for (const [id, card] of cards) {
    const g = games.get(id);
    if (g) updateClocks(card, g);
  }
}, 100);

// ---------------------------------------------------------------------------
// The stream
// ---------------------------------------------------------------------------

function setStatus(state, text) {
  const badge = document.getElementById("status");
  badge.dataset.state = state;
  badge.textContent = text;
  document.body.dataset.connection = state;
}

function fail(text) {
  setStatus("error", text);
  document.getElementById("empty").textContent = text;
}

const where = target("live");
const round = where ? where.round : "";

async function follow(client, headers) {
  let cursor = "";
  let backoff = 500;
  let resumes = 0;
  for (;;) {
    const request = cursor
      ? { event: where.event, round: where.round, fromCursor: cursor }
      : { event: where.event, round: where.round, fromSeq: 0n };
    document.body.dataset.lastStart = cursor ? "cursor" : "scratch";
    if (cursor) {
      resumes += 1;
      document.body.dataset.resumes = String(resumes);
    } else {
      clearAll();
    }
    try {
      for await (const ev of client.watchEvent(request, { headers })) {
        if (document.body.dataset.connection !== "live") setStatus("live", "live");
        backoff = 500;
        applyEvent(ev);
        if (ev.cursor) cursor = ev.cursor;
        if (ev.gameId) markDirty(ev.gameId);
      }
      // Ended with status OK: every game of the stream has finished.
      if (games.size === 0) {
        setStatus("waiting", "waiting for games");
        cursor = "";
        await sleep(5000);
        continue;
      }
      setStatus("finished", standings && standings.finished ? "tournament over" : "round finished");
      return;
    } catch (e) {
      const err = ConnectError.from(e);
      if (err.code === Code.InvalidArgument && cursor) {
        // The server cannot resume from this cursor (e.g. another server version).
        cursor = "";
        continue;
      }
      if (err.code === Code.Unauthenticated || err.code === Code.PermissionDenied || err.code === Code.InvalidArgument) {
        fail(`${err.rawMessage || err.message}`);
        return;
      }
      setStatus("reconnecting", "reconnecting…");
      await sleep(backoff);
      backoff = Math.min(backoff * 2, 5000);
    }
  }
}

async function main() {
  if (!where) {
    fail("Open /live/<event> or /live/<event>/<round>.");
    return;
  }
  if (hall) document.body.dataset.view = "hall";
  document.getElementById("event").textContent = where.event;
  document.getElementById("round").textContent = where.round ? `Round ${where.round}` : "All rounds";
  document.title = `${where.event}${where.round ? ` · Round ${where.round}` : ""} — live boards`;
  // A sign-in (or out) starts the stream over with the new token.
  wireSignIn(() => location.reload());
  const api = await loadApi(() => setStatus("reconnecting", "reconnecting…"));
  await follow(api.broadcast, authHeaders());
}

main();
