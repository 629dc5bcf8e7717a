// The arbiter's console (src/web/live.rs): every board of an event's round at a glance,
// the alerts that need the arbiter on top, and from a board's panel the arbiter's
// commands (ArbiterService) with their reason and rule fields.
//
// The page is public; every call carries the token the arbiter signed in with (common.js:
// sessionStorage, `authorization: Bearer`, never the URL), so the server's rules decide
// what it may do and a refusal is shown with the server's own words.
//
// It follows the round over `BroadcastService/WatchEvent` (from seq 0: every event of
// every game, the log each board's panel lists) and, after each game's events, reads the
// game again (`GameService/GetGame`) for what the grid shows: clocks, status, board
// health, the pending draw offer, claim and irregularities, warnings. On a tournament's
// event it also reads the tournament (`TournamentService/GetTournament`) to start the
// round, record forfeits and absences and pair a round by hand.

import {
  CLOCK_RUNNING,
  Code,
  ConnectError,
  SCORE,
  SIDE_BLACK,
  SIDE_WHITE,
  STATUS,
  authHeaders,
  el,
  clockOf,
  formatClock,
  loadApi,
  num,
  refusalText,
  sleep,
  target,
  timestampMs,
  token,
  wireSignIn,
} from "./common.js";

const where = target("arbiter");
let api = null;

// Per game id: { game (the last `Game` read), log (its events), flagSeen }.
const boards = new Map();
// The board whose panel is open (a game id), and the one selected in the grid.
let open = "";
let selected = "";
// The tournament, when the event is one.
let tournament = null;

const HEALTH = { 1: "connected", 2: "not responding", 3: "disconnected" };
const HEALTH_CLASS = { 1: "ok", 2: "warn", 3: "bad" };
const ACTOR = { 1: "player", 2: "board", 3: "arbiter", 4: "server" };

function side(s) {
  return s === SIDE_WHITE ? "White" : s === SIDE_BLACK ? "Black" : "";
}

function words(enumName, value) {
  return api ? api.enumWords(enumName, value) : String(value);
}

function time(ts) {
  return ts ? new Date(timestampMs(ts)).toLocaleTimeString([], { hour12: false }) : "";
}

function ago(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min ago`;
}

// ---------------------------------------------------------------------------
// Messages and sound
// ---------------------------------------------------------------------------

function say(text, kind) {
  const m = document.getElementById("message");
  m.textContent = text;
  m.dataset.kind = kind || "error";
  m.hidden = !text;
}

function setStatus(state, text) {
  const badge = document.getElementById("status");
  badge.dataset.state = state;
  badge.textContent = text;
  document.body.dataset.connection = state;
}

// WebAudio may only sound after the page has been used (clicked or typed in).
let audio = null;
function wakeAudio() {
  if (!audio && window.AudioContext) audio = new AudioContext();
}
document.addEventListener("pointerdown", wakeAudio, { once: true });
document.addEventListener("keydown", wakeAudio, { once: true });

// How many cues have sounded, on the body as `data-cues` (what a test or an operator can
// read: a headless browser plays nothing).
let cues = 0;
function beep() {
  if (!audio) return;
  cues += 1;
  document.body.dataset.cues = String(cues);
  const osc = audio.createOscillator();
  const gain = audio.createGain();
  osc.frequency.value = 880;
  gain.gain.setValueAtTime(0.15, audio.currentTime);
  gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.35);
  osc.connect(gain).connect(audio.destination);
  osc.start();
  osc.stop(audio.currentTime + 0.35);
}

// ---------------------------------------------------------------------------
// Clocks and alerts
// ---------------------------------------------------------------------------

function remaining(b, s) {
  const c = b.clock;
  if (!c) return null;
  let ms = s === SIDE_WHITE ? c.white : c.black;
  if (c.state === CLOCK_RUNNING && c.running === s && b.game.status === 2) ms -= Math.max(0, Date.now() - c.readAt);
  return ms;
}

function untimed(g) {
  return !g.timeControl || g.timeControl === "-";
}

function label(g) {
  const r = !where.round && g.round ? `R${g.round} ` : "";
  return g.board ? `${r}Board ${g.board}` : g.id;
}

// The default time (T 5) of a game: its own setting, else the tournament's.
function defaultTime(g) {
  const own = num(g.settings && g.settings.defaultTimeMs);
  return own || num(tournament && tournament.defaultTimeMs);
}

// What needs the arbiter now, per board: [{ key, board (game id), level, text }].
function alerts() {
  const out = [];
  for (const [id, b] of boards) {
    const g = b.game;
    if (!g) continue;
    const name = label(g);
    const live = g.status !== 4;
    if (g.pendingClaim && g.pendingClaim.seq) {
      const c = g.pendingClaim;
      out.push({ key: `${id}:claim:${c.seq}`, id, level: "bad", kind: "claim", text: `${name}: ${side(c.side)} claims a draw (${words("DrawClaimKind", c.kind)}): rule on it` });
    }
    for (const i of g.pendingIrregularities) {
      out.push({
        key: `${id}:irr:${i.seq}`,
        id,
        level: "bad",
        kind: "irregularity",
        text: `${name}: ${words("IrregularityKind", i.kind)} by ${side(i.side)}${i.rule ? ` [${i.rule}]` : ""}: rule on it`,
      });
    }
    if (live && !untimed(g)) {
      for (const s of [SIDE_WHITE, SIDE_BLACK]) {
        const ms = remaining(b, s);
        if ((ms !== null && ms <= 0 && b.clock.state !== 1) || b.flagSeen === s) {
          out.push({ key: `${id}:flag:${s}`, id, level: "bad", kind: "flag", text: `${name}: ${side(s)}'s flag has fallen` });
        }
      }
    }
    const h = g.boardStatus;
    if (live && h && (h.health === 2 || h.health === 3)) {
      const since = h.since ? ` since ${time(h.since)}` : "";
      out.push({ key: `${id}:health:${h.health}`, id, level: h.health === 3 ? "bad" : "warn", kind: "board", text: `${name}: board ${h.boardId} ${HEALTH[h.health]}${since}` });
    }
    const dt = defaultTime(g);
    if (live && dt > 0 && g.startedAt && g.status === 2) {
      // T 5: a player who has not made a first move by the default time loses. Alert from
      // the last five minutes (or the last quarter of a shorter default time).
      const started = timestampMs(g.startedAt);
      const late = [SIDE_WHITE, SIDE_BLACK].filter((s) => !g.moves.some((m) => m.side === s) && g.sideToMove === s);
      const left = started + dt - Date.now();
      if (late.length && left <= Math.min(5 * 60000, dt / 4)) {
        const when = left > 0 ? `in ${formatClock(left)}` : "reached";
        out.push({ key: `${id}:default`, id, level: left > 0 ? "warn" : "bad", kind: "default", text: `${name}: default time ${when} (T 5): ${side(late[0])} has not moved` });
      }
    }
  }
  const rank = { bad: 0, warn: 1 };
  return out.sort((a, b) => rank[a.level] - rank[b.level]);
}

const seenAlerts = new Set();

function renderAlerts() {
  const list = document.getElementById("alerts");
  const now = alerts();
  let fresh = false;
  const items = now.map((a) => {
    const li = el("li", `alert ${a.level}`);
    li.dataset.kind = a.kind;
    li.dataset.gameId = a.id;
    if (!seenAlerts.has(a.key)) {
      fresh = true;
      li.classList.add("new");
    }
    const button = el("button", "", a.text);
    button.type = "button";
    button.addEventListener("click", () => openPanel(a.id));
    li.appendChild(button);
    return li;
  });
  const text = (ls) => ls.map((l) => l.textContent).join("\n");
  if (text(items) !== text([...list.children]) || fresh) list.replaceChildren(...items);
  document.getElementById("alert-count").textContent = String(now.length);
  document.getElementById("alerts-box").dataset.count = String(now.length);
  seenAlerts.clear();
  for (const a of now) seenAlerts.add(a.key);
  if (fresh) beep();
}

// ---------------------------------------------------------------------------
// The grid
// ---------------------------------------------------------------------------

function ordered() {
  return [...boards.values()]
    .filter((b) => b.game)
    .sort(
      (a, b) =>
        a.game.round.localeCompare(b.game.round, undefined, { numeric: true }) ||
        a.game.board - b.game.board ||
        a.game.id.localeCompare(b.game.id),
    );
}

function playerName(p, s) {
  return (p && p.name) || side(s);
}

function clockCell(b, s) {
  const c = el("span", "clock");
  c.dataset.side = s === SIDE_WHITE ? "white" : "black";
  return c;
}

function updateClocks(card, b) {
  for (const c of card.querySelectorAll(".clock")) {
    const s = c.dataset.side === "white" ? SIDE_WHITE : SIDE_BLACK;
    if (untimed(b.game)) {
      c.textContent = "—";
      continue;
    }
    const ms = remaining(b, s);
    if (ms === null) {
      c.textContent = b.game.timeControl;
      continue;
    }
    c.textContent = formatClock(ms);
    c.dataset.ms = String(Math.round(ms));
    const running = b.clock.state === CLOCK_RUNNING && b.clock.running === s && b.game.status === 2;
    c.classList.toggle("running", running);
    c.classList.toggle("low", ms < 30000);
    c.classList.toggle("flag", ms <= 0);
  }
}

function healthLine(g) {
  const h = g.boardStatus;
  if (!h || !h.health) return el("span", "health none", "no board");
  const line = el("span", `health ${HEALTH_CLASS[h.health] || ""}`, `${HEALTH[h.health] || "?"}`);
  line.dataset.health = HEALTH[h.health] || "";
  if (h.since) {
    line.textContent += ` since ${time(h.since)}`;
    line.title = `board ${h.boardId}, ${ago(Date.now() - timestampMs(h.since))}`;
  }
  return line;
}

// The sides marked absent (T 5) that have not moved since, from the game's log.
function absentSides(b) {
  const absent = new Set();
  for (const ev of b.log) {
    if (ev.kind.case === "playerMarkedAbsent") absent.add(ev.kind.value.side);
    if (ev.kind.case === "movePlayed") absent.delete(ev.kind.value.side);
  }
  return [...absent];
}

function card(b) {
  const g = b.game;
  const c = el("article", "card");
  c.tabIndex = 0;
  c.dataset.gameId = g.id;
  c.dataset.board = String(g.board);
  c.dataset.status = STATUS[g.status] || "";
  if (g.id === selected) c.classList.add("selected");
  if (g.pendingClaim || g.pendingIrregularities.length) c.classList.add("attention");
  const head = el("div", "head");
  head.appendChild(el("span", "no", label(g)));
  const state = g.status === 4 ? `${SCORE[g.result] || ""} ${words("ResultReason", g.resultReason)}` : STATUS[g.status] || "";
  head.appendChild(el("span", `state s${g.status}`, state));
  c.appendChild(head);
  for (const s of [SIDE_WHITE, SIDE_BLACK]) {
    const row = el("div", `player ${s === SIDE_WHITE ? "white" : "black"}`);
    if (g.status === 2 && g.sideToMove === s) row.classList.add("to-move");
    row.appendChild(el("span", "name", playerName(s === SIDE_WHITE ? g.white : g.black, s)));
    row.appendChild(clockCell(b, s));
    c.appendChild(row);
  }
  const flags = el("div", "flags");
  flags.appendChild(healthLine(g));
  if (g.pendingDrawOffer && g.pendingDrawOffer.side) flags.appendChild(el("span", "tag offer", `draw offer: ${side(g.pendingDrawOffer.side)}`));
  if (g.pendingClaim && g.pendingClaim.seq) flags.appendChild(el("span", "tag claim", `claim: ${side(g.pendingClaim.side)}`));
  if (g.pendingIrregularities.length) flags.appendChild(el("span", "tag irr", `irregularities: ${g.pendingIrregularities.length}`));
  if (g.warnings.length) flags.appendChild(el("span", "tag warn", `warnings: ${g.warnings.length}`));
  if (g.status !== 4) for (const s of absentSides(b)) flags.appendChild(el("span", "tag absent", `absent: ${side(s)} (T 5)`));
  if (g.quarantine) flags.appendChild(el("span", "tag bad", "quarantined"));
  c.appendChild(flags);
  c.addEventListener("click", () => openPanel(g.id));
  updateClocks(c, b);
  return c;
}

function renderGrid() {
  const grid = document.getElementById("boards");
  const list = ordered();
  const had = document.activeElement && grid.contains(document.activeElement) ? document.activeElement.dataset.gameId : "";
  grid.replaceChildren(...list.map(card));
  if (had) {
    const again = grid.querySelector(`.card[data-game-id="${CSS.escape(had)}"]`);
    if (again) again.focus();
  }
  document.getElementById("empty").hidden = list.length > 0;
  renderAlerts();
}

setInterval(() => {
  for (const c of document.querySelectorAll("#boards .card")) {
    const b = boards.get(c.dataset.gameId);
    if (b && b.game) updateClocks(c, b);
  }
  renderAlerts();
}, 200);

// ---------------------------------------------------------------------------
// A board's panel
// ---------------------------------------------------------------------------

// A form: fields (label, input) and a submit button; `run(values)` makes the call.
// `confirm`: a question asked (and answered with a second click) before the call.
function form(name, title, fields, button, run, confirm) {
  const f = el("form", "act");
  f.dataset.act = name;
  f.appendChild(el("h4", "", title));
  for (const field of fields) {
    const l = el("label", "", field.label);
    let input;
    if (field.options) {
      input = el("select");
      for (const [value, text] of field.options) {
        const o = el("option", "", text);
        o.value = String(value);
        input.appendChild(o);
      }
    } else {
      input = el("input");
      input.type = "text";
      if (field.placeholder) input.placeholder = field.placeholder;
    }
    input.name = field.name;
    if (field.value !== undefined) input.value = field.value;
    l.appendChild(input);
    f.appendChild(l);
  }
  const go = el("button", "go", button);
  go.type = "submit";
  f.appendChild(go);
  const ask = el("div", "confirm");
  ask.hidden = true;
  f.appendChild(ask);
  f.addEventListener("submit", async (e) => {
    e.preventDefault();
    const values = Object.fromEntries(new FormData(f).entries());
    if (confirm && f.dataset.confirmed !== "yes") {
      ask.replaceChildren(el("span", "", confirm(values)));
      const yes = el("button", "yes", "Confirm");
      yes.type = "button";
      const no = el("button", "no", "Cancel");
      no.type = "button";
      yes.addEventListener("click", () => {
        f.dataset.confirmed = "yes";
        f.requestSubmit();
      });
      no.addEventListener("click", () => {
        ask.hidden = true;
        go.focus();
      });
      ask.append(yes, no);
      ask.hidden = false;
      yes.focus();
      return;
    }
    f.dataset.confirmed = "";
    ask.hidden = true;
    go.disabled = true;
    try {
      await run(values);
      say(`${title}: done`, "ok");
    } catch (err) {
      say(`${title}: ${refusalText(err)}`);
    } finally {
      go.disabled = false;
    }
  });
  return f;
}

const REASON = { name: "reason", label: "Reason" };
const RULE = { name: "rule", label: "Rule", placeholder: "e.g. RU 1.9.2" };
const SIDES = [
  [SIDE_WHITE, "White"],
  [SIDE_BLACK, "Black"],
];

// "90", "1:30", "-0:10" → milliseconds.
function parseDuration(text) {
  const t = text.trim();
  const neg = t.startsWith("-");
  const parts = t.replace(/^[-+]/, "").split(":").map(Number);
  if (!t || parts.some((p) => !Number.isFinite(p) || p < 0)) throw new Error(`time: "${text}" is not seconds or m:ss`);
  const s = parts.reduce((acc, p) => acc * 60 + p, 0);
  return BigInt(Math.round(s * 1000)) * (neg ? -1n : 1n);
}

async function call(method, request) {
  const answer = await method(request, { headers: authHeaders() });
  if (answer && answer.game) applyGame(answer.game);
  return answer;
}

function actorText(a) {
  if (!a || !a.kind) return "";
  const who = a.name || a.id;
  const s = a.side ? ` (${side(a.side).toLowerCase()})` : "";
  return `${ACTOR[a.kind] || "?"}${who ? `: ${who}` : ""}${s}`;
}

function renderPanel() {
  const panel = document.getElementById("panel");
  const b = boards.get(open);
  if (!b || !b.game) {
    panel.hidden = true;
    document.body.dataset.panel = "";
    return;
  }
  const focused = document.activeElement && panel.contains(document.activeElement) ? document.activeElement : null;
  if (focused && (focused.tagName === "INPUT" || focused.tagName === "SELECT") && panel.dataset.gameId === open) {
    // Do not redraw under the arbiter's typing; the log is refreshed below.
    renderLog(panel.querySelector(".log"), b);
    return;
  }
  const g = b.game;
  panel.hidden = false;
  panel.dataset.gameId = g.id;
  document.body.dataset.panel = g.id;
  const head = el("div", "phead");
  head.appendChild(el("h3", "", `${label(g)}: ${playerName(g.white, SIDE_WHITE)} – ${playerName(g.black, SIDE_BLACK)}`));
  const close = el("button", "close", "Close (Esc)");
  close.type = "button";
  close.addEventListener("click", closePanel);
  head.appendChild(close);
  const facts = el("p", "facts");
  facts.textContent = [
    g.id,
    g.timeControl || "untimed",
    STATUS[g.status],
    g.status === 4 ? `${SCORE[g.result] || ""} (${words("ResultReason", g.resultReason)}${g.rule ? `, ${g.rule}` : ""})` : "",
    `${g.moveCount} moves`,
  ]
    .filter(Boolean)
    .join(" · ");
  const parts = [head, facts];
  const id = g.id;
  const A = api.arbiter;

  if (g.pendingClaim && g.pendingClaim.seq) {
    const c = g.pendingClaim;
    parts.push(
      form(
        "claim",
        `Draw claim by ${side(c.side)} (${words("DrawClaimKind", c.kind)}${c.writtenMove ? `, written move ${c.writtenMove.notation}` : ""})`,
        [{ name: "ruling", label: "Ruling", options: [[1, "correct: draw"], [2, "incorrect: play on"]] }, REASON, RULE],
        "Rule on the claim",
        (v) => call(A.ruleOnClaim, { gameId: id, claimSeq: c.seq, ruling: Number(v.ruling), reason: v.reason, rule: v.rule }),
      ),
    );
  }
  for (const i of g.pendingIrregularities) {
    parts.push(
      form(
        `irregularity-${i.seq}`,
        `Irregularity #${i.seq}: ${words("IrregularityKind", i.kind)} by ${side(i.side)}${i.rule ? ` [${i.rule}]` : ""}`,
        [{ name: "ruling", label: "Ruling", options: [[2, "corrected"], [1, "stands"]] }, REASON, { ...RULE, value: i.rule }],
        "Rule on the irregularity",
        (v) => call(A.ruleOnIrregularity, { gameId: id, irregularitySeq: i.seq, ruling: Number(v.ruling), reason: v.reason, rule: v.rule }),
      ),
    );
  }
  if (g.status === 2) {
    parts.push(form("pause", "Pause the clocks", [REASON, RULE], "Pause", (v) => call(A.pauseClocks, { gameId: id, reason: v.reason, rule: v.rule })));
  } else if (g.status === 3) {
    parts.push(form("resume", "Resume the clocks", [REASON, RULE], "Resume", (v) => call(A.resumeClocks, { gameId: id, reason: v.reason, rule: v.rule })));
  }
  if (g.status !== 4) {
    parts.push(
      form(
        "adjust",
        "Adjust a clock",
        [
          { name: "side", label: "Side", options: SIDES },
          { name: "how", label: "Change", options: [["add", "add (negative: remove)"], ["set", "set remaining to"]] },
          { name: "time", label: "Time (s or m:ss)", placeholder: "60" },
          REASON,
          RULE,
        ],
        "Adjust",
        (v) => {
          const ms = parseDuration(v.time);
          const change = v.how === "set" ? { case: "setRemainingMs", value: ms } : { case: "addMs", value: ms };
          return call(A.adjustClock, { gameId: id, side: Number(v.side), change, reason: v.reason, rule: v.rule });
        },
      ),
    );
    parts.push(
      form("warn", "Warn a player", [{ name: "side", label: "Side", options: SIDES }, REASON, RULE], "Warn", (v) =>
        call(A.issueWarning, { gameId: id, side: Number(v.side), reason: v.reason, rule: v.rule }),
      ),
    );
    parts.push(
      form(
        "position",
        "Set the position",
        [{ name: "fen", label: "FEN", value: g.fen }, REASON, RULE],
        "Set position",
        (v) => call(A.setPosition, { gameId: id, fen: v.fen, reason: v.reason, rule: v.rule }),
        (v) => `Set the official position of ${label(g)} to ${v.fen}? This cannot be undone.`,
      ),
    );
  }
  parts.push(
    form(
      "result",
      g.status === 4 ? "Correct the result" : "Declare a result",
      [
        { name: "result", label: "Result", options: [[1, "1–0 white wins"], [2, "0–1 black wins"], [3, "½–½ draw"], [4, "0–0 both lose"], [5, "annulled"]] },
        { name: "reason", label: "Kind", options: [[8, "arbiter's decision"], [9, "penalty (rule required)"], [16, "forfeit (T 6)"]] },
        RULE,
        { name: "explanation", label: "Explanation (required)" },
      ],
      "Declare",
      (v) => call(A.declareResult, { gameId: id, result: Number(v.result), reason: Number(v.reason), rule: v.rule, explanation: v.explanation }),
      (v) => `Declare ${SCORE[v.result]} on ${label(g)}? The game ends.`,
    ),
  );
  if (g.warnings.length) {
    const w = el("ul", "warnings");
    for (const x of g.warnings) w.appendChild(el("li", "", `${side(x.side)}: ${x.reason}${x.rule ? ` [${x.rule}]` : ""}`));
    parts.push(el("h4", "", "Warnings"), w);
  }
  parts.push(el("h4", "", "Log"));
  const log = el("div", "log");
  renderLog(log, b);
  parts.push(log);
  panel.replaceChildren(...parts);
}

function renderLog(box, b) {
  if (!box) return;
  const table = el("table");
  const head = el("tr");
  for (const h of ["#", "time", "what", "who", "rule"]) head.appendChild(el("th", "", h));
  table.appendChild(head);
  for (const ev of [...b.log].reverse()) {
    const tr = el("tr");
    tr.dataset.seq = String(ev.seq);
    tr.dataset.kind = ev.kind.case || "";
    tr.appendChild(el("td", "seq", String(ev.seq)));
    tr.appendChild(el("td", "t", time(ev.serverTime)));
    tr.appendChild(el("td", "d", ev.description || ev.kind.case || ""));
    tr.appendChild(el("td", "a", actorText(ev.actor)));
    tr.appendChild(el("td", "r", ev.rule || ""));
    table.appendChild(tr);
  }
  box.replaceChildren(table);
}

function openPanel(id) {
  open = id;
  selected = id;
  renderGrid();
  renderPanel();
  const first = document.querySelector("#panel form .go") || document.querySelector("#panel .close");
  if (first) first.focus();
}

function closePanel() {
  open = "";
  renderPanel();
  const c = document.querySelector(`#boards .card[data-game-id="${CSS.escape(selected)}"]`);
  if (c) c.focus();
}

// ---------------------------------------------------------------------------
// Keys: digits pick a board by number, arrows move, Enter opens, Esc closes
// ---------------------------------------------------------------------------

let typed = "";
let typedAt = 0;

function select(id) {
  selected = id;
  for (const c of document.querySelectorAll("#boards .card")) c.classList.toggle("selected", c.dataset.gameId === id);
  const c = document.querySelector(`#boards .card[data-game-id="${CSS.escape(id)}"]`);
  if (c) c.focus();
}

document.addEventListener("keydown", (e) => {
  const inField = ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName);
  if (e.key === "Escape") {
    if (!document.getElementById("signin").hidden && token()) document.getElementById("signin").hidden = true;
    else if (open) closePanel();
    return;
  }
  if (inField || e.ctrlKey || e.metaKey || e.altKey) return;
  const list = ordered().map((b) => b.game.id);
  if (/^[0-9]$/.test(e.key)) {
    typed = Date.now() - typedAt < 800 ? typed + e.key : e.key;
    typedAt = Date.now();
    const b = ordered().find((x) => String(x.game.board) === typed);
    if (b) {
      select(b.game.id);
      if (open) openPanel(b.game.id);
    }
    return;
  }
  const at = list.indexOf(selected);
  const cols = Math.max(1, Math.round(document.getElementById("boards").clientWidth / 250));
  const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: cols, ArrowUp: -cols }[e.key];
  if (step && list.length) {
    e.preventDefault();
    const next = at < 0 ? 0 : Math.min(list.length - 1, Math.max(0, at + step));
    select(list[next]);
    return;
  }
  if (e.key === "Enter" && e.target.classList && e.target.classList.contains("card")) {
    // No keypress after it: it would reach the panel's button that now has the focus.
    e.preventDefault();
    openPanel(e.target.dataset.gameId);
  }
});

// ---------------------------------------------------------------------------
// The tournament: start the round, forfeits, absences, a pairing by hand
// ---------------------------------------------------------------------------

async function loadTournament() {
  try {
    const t = await api.tournaments.getTournament({ tournament: where.event }, { headers: authHeaders() });
    tournament = t.tournament || null;
  } catch (e) {
    const err = ConnectError.from(e);
    tournament = null;
    if (err.code !== Code.NotFound) say(`Tournament: ${refusalText(e)}`);
  }
  renderTournament();
}

function roundShown() {
  const rounds = tournament.pairedRounds;
  if (where.round) return rounds.find((r) => String(r.round) === where.round) || null;
  return rounds.length ? rounds[rounds.length - 1] : null;
}

function tform(name, title, fields, button, run) {
  return form(name, title, fields, button, async (v) => {
    await run(v);
    await loadTournament();
  });
}

function renderTournament() {
  const box = document.getElementById("tournament");
  if (!tournament) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const t = tournament;
  const T = api.tournaments;
  const r = roundShown();
  const parts = [el("h2", "", `${t.name}: ${r ? `round ${r.round} of ${t.rounds}` : "no round paired yet"}`)];
  const players = new Map(t.players.map((p) => [p.playerId, p]));
  const who = (id) => {
    const p = players.get(id);
    return p ? `${p.name} (#${p.playerId})` : `#${id}`;
  };
  if (r) {
    const facts = [r.startedAt ? `started ${time(r.startedAt)}` : "not started", r.finished ? "finished" : "", r.source ? `pairings: ${r.source}` : ""];
    if (r.absentPlayerIds.length) facts.push(`absent: ${r.absentPlayerIds.map(who).join(", ")}`);
    parts.push(el("p", "facts", facts.filter(Boolean).join(" · ")));
    if (!r.startedAt) {
      parts.push(tform("start-round", `Start round ${r.round}`, [], "Start the round", () => T.startRound({ tournament: t.name, round: r.round }, { headers: authHeaders() })));
    }
    const options = [];
    for (const p of r.pairings) {
      for (const pl of [p.white, p.black]) if (pl) options.push([pl.playerId, `board ${p.board}: ${pl.name} (#${pl.playerId})`]);
    }
    if (options.length) {
      parts.push(
        tform("absent", "Mark a player absent (T 5)", [{ name: "player", label: "Player", options }], "Mark absent", (v) =>
          T.markAbsent({ tournament: t.name, round: r.round, playerId: Number(v.player) }, { headers: authHeaders() }),
        ),
      );
      parts.push(
        tform("forfeit", "Record a forfeit (T 6)", [{ name: "player", label: "Player who forfeits", options }], "Record forfeit", (v) =>
          T.recordForfeit({ tournament: t.name, round: r.round, playerId: Number(v.player) }, { headers: authHeaders() }),
        ),
      );
    }
  }
  const next = t.pairedRounds.length + 1;
  const last = t.pairedRounds[t.pairedRounds.length - 1];
  // The next round is paired once the last one is over (PairRound refuses it before).
  if (!t.finished && next <= t.rounds && (!last || last.finished)) {
    parts.push(
      tform(
        "pair",
        `Pair round ${next} by hand`,
        [
          { name: "boards", label: "Boards: white id–black id, comma-separated", placeholder: "1-4, 2-3" },
          { name: "note", label: "Note", value: "entered by the arbiter" },
        ],
        "Pair the round",
        (v) => {
          const given = v.boards
            .split(",")
            .map((x) => x.trim())
            .filter(Boolean)
            .map((x) => {
              const m = /^(\d+)\s*[-–]\s*(\d+)$/.exec(x);
              if (!m) throw new Error(`boards: "${x}" is not white id-black id`);
              return { whitePlayerId: Number(m[1]), blackPlayerId: Number(m[2]) };
            });
          return T.pairRound({ tournament: t.name, round: next, boards: given, sourceNote: v.note }, { headers: authHeaders() });
        },
      ),
    );
  }
  box.replaceChildren(...parts);
}

// ---------------------------------------------------------------------------
// The stream and the games
// ---------------------------------------------------------------------------

function entry(id) {
  let b = boards.get(id);
  if (!b) {
    b = { game: null, log: [], flagSeen: 0, clock: null, reading: false, again: false };
    boards.set(id, b);
  }
  return b;
}

function applyGame(g) {
  const b = entry(g.id);
  b.game = g;
  b.clock = clockOf(g.clock);
  if (g.status === 4) b.flagSeen = 0;
  queueRender();
}

// Reads a game again after its events (one read at a time per game).
async function refresh(id) {
  const b = entry(id);
  if (b.reading) {
    b.again = true;
    return;
  }
  b.reading = true;
  try {
    do {
      b.again = false;
      applyGame(await api.games.getGame({ gameId: id }, { headers: authHeaders() }));
    } while (b.again);
  } catch (e) {
    say(`${id}: ${refusalText(e)}`);
  } finally {
    b.reading = false;
  }
}

let renderQueued = false;
function queueRender() {
  if (renderQueued) return;
  renderQueued = true;
  setTimeout(() => {
    renderQueued = false;
    renderGrid();
    if (open) renderPanel();
  }, 0);
}

function applyEvent(ev) {
  const id = ev.gameId;
  if (!id || ev.kind.case === "standingsUpdated") return;
  const b = entry(id);
  const seq = num(ev.seq);
  if (ev.kind.case !== "resync") {
    if (b.log.length && seq <= num(b.log[b.log.length - 1].seq)) return;
    b.log.push(ev);
  }
  if (ev.kind.case === "flagFell") b.flagSeen = ev.kind.value.side;
  if (ev.kind.case === "gameCreated" && tournament) loadTournamentSoon();
  refresh(id);
}

let tournamentTimer = 0;
function loadTournamentSoon() {
  clearTimeout(tournamentTimer);
  tournamentTimer = setTimeout(loadTournament, 300);
}

let generation = 0;

async function follow() {
  const mine = ++generation;
  let cursor = "";
  let backoff = 500;
  while (mine === generation) {
    const request = cursor
      ? { event: where.event, round: where.round, fromCursor: cursor }
      : { event: where.event, round: where.round, fromSeq: 0n };
    try {
      for await (const ev of api.broadcast.watchEvent(request, { headers: authHeaders() })) {
        if (mine !== generation) return;
        if (document.body.dataset.connection !== "live") setStatus("live", "live");
        backoff = 500;
        applyEvent(ev);
        if (ev.cursor) cursor = ev.cursor;
      }
      // Every game on the stream has finished: look again for a new round's games.
      setStatus("finished", boards.size ? "all games finished" : "waiting for games");
      await sleep(5000);
    } catch (e) {
      const err = ConnectError.from(e);
      if (err.code === Code.InvalidArgument && cursor) {
        cursor = "";
        continue;
      }
      if ([Code.Unauthenticated, Code.PermissionDenied, Code.InvalidArgument, Code.NotFound].includes(err.code)) {
        setStatus("error", "refused");
        say(refusalText(e));
        return;
      }
      setStatus("reconnecting", "reconnecting…");
      await sleep(backoff);
      backoff = Math.min(backoff * 2, 5000);
    }
  }
}

function start() {
  boards.clear();
  open = "";
  renderGrid();
  renderPanel();
  say("");
  const form = document.getElementById("signin");
  if (!token()) {
    generation += 1;
    form.hidden = false;
    form.elements.token.focus();
    setStatus("signed-out", "signed out");
    document.getElementById("tournament").hidden = true;
    return;
  }
  form.hidden = true;
  setStatus("connecting", "connecting…");
  loadTournament();
  follow();
}

async function main() {
  if (!where) {
    say("Open /arbiter/<event> or /arbiter/<event>/<round>.");
    return;
  }
  document.getElementById("event").textContent = where.event;
  document.getElementById("round").textContent = where.round ? `Round ${where.round}` : "All rounds";
  document.title = `${where.event}${where.round ? ` · Round ${where.round}` : ""} — arbiter's console`;
  const signIn = wireSignIn(start);
  api = await loadApi(() => setStatus("reconnecting", "reconnecting…"));
  signIn.show();
  start();
}

main();
