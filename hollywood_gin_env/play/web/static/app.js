// The page of `hollywood-gin play --web`: shows the state the server sends (only what you may know) and turns
// clicks into moves. The match id lives after the # of the address; every move names the state it was made on.
"use strict";

const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
const $ = (id) => document.getElementById(id);
let matchId = location.hash.slice(1);
let state = null;
let busy = false;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// A card face drawn with CSS: rank and suit in the corners, the suit large in the middle.
function cardFace(name, tag = "div") {
  const [rank, suit] = [name[0] === "T" ? "10" : name[0], name[1]];
  const card = el(tag, `card face suit-${suit}`);
  card.setAttribute("aria-label", name);
  card.append(el("span", "corner", rank + SUITS[suit]), el("span", "pip", SUITS[suit]),
              el("span", "corner bottom", rank + SUITS[suit]));
  return card;
}

function legal(action, card) {
  return state.legal.find((m) => m.action === action && (card === undefined || m.card === card));
}

async function call(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({ error: `The server answered ${response.status}.` }));
  if (!response.ok) throw new Error(data.error || `The server answered ${response.status}.`);
  return data;
}

async function act(request) {
  if (busy) return;
  busy = true;
  document.body.classList.add("busy");
  try {
    await request();
    $("message").textContent = "";
  } catch (error) {
    $("message").textContent = error.message;
    if (!state) $("loading").textContent = error.message; // nothing shown yet: say it where the page is waiting
  } finally {
    busy = false;
    document.body.classList.remove("busy");
    if (state) show();
  }
}

function move(action, card) {
  const body = { seq: state.seq, action };
  if (card) body.card = card;
  return act(async () => {
    state = (await call("POST", `/api/matches/${matchId}/move`, body)).state;
  });
}

function newMatch() {
  if (state && !state.match_end && !confirm("Leave this match and start a new one?")) return;
  return act(async () => {
    const data = await call("POST", "/api/matches", {});
    matchId = data.id;
    history.replaceState(null, "", `#${matchId}`);
    state = data.state;
    $("answer").replaceChildren();
  });
}

// A typed command's answer, or why it was refused, shows under the box it was typed in (the refused text stays
// in the box to be corrected).
function typed(event) {
  event.preventDefault();
  const text = $("command").value;
  return act(async () => {
    let data;
    try {
      data = await call("POST", `/api/matches/${matchId}/command`, { seq: state.seq, text });
    } catch (error) {
      $("answer").replaceChildren(el("li", "refused", error.message));
      return;
    }
    state = data.state;
    $("command").value = "";
    $("answer").replaceChildren(...data.message.map((line) => el("li", "", line)));
  });
}

function showBot() {
  const bot = state.bot;
  const name = state.opponent_name;
  $("bot-name").textContent = name.toLowerCase() === state.opponent ? name : `${name} (${state.opponent})`;
  $("bot-count").textContent = `${bot.cards} cards${state.dealer === "bot" ? " \u00b7 deals" : ""}`;
  const hidden = bot.cards - bot.took.length;
  $("bot-hand").replaceChildren(...Array.from({ length: hidden }, () => el("div", "card back small")));
  $("bot-took").replaceChildren(...(bot.took.length ? [el("span", "muted", "holds, taken from the pile:"),
    ...bot.took.map((c) => cardFace(c))] : []));
}

function showPiles() {
  const pile = state.pile;
  const stock = $("stock");
  stock.disabled = !legal("draw");
  stock.classList.toggle("playable", !stock.disabled);
  $("stock-size").textContent = `stock ${state.stock}`;
  const take = legal("take");
  const faceUp = $("face-up");
  faceUp.replaceChildren();
  if (pile.face_up) {
    const card = cardFace(pile.face_up, "button");
    card.type = "button";
    card.dataset.action = "take";
    card.dataset.card = pile.face_up;
    card.disabled = !take;
    card.classList.toggle("playable", Boolean(take));
    card.addEventListener("click", () => move("take", pile.face_up));
    faceUp.append(card);
  }
  $("face-up-caption").textContent = take ? "click to take" : "face-up card";
  const older = pile.recent.slice(0, -1);
  $("recent").replaceChildren(...older.map((c) => cardFace(c)));
  $("pile-caption").textContent = pile.size > 1 ? `pile ${pile.size}, newest right` : "";
  $("pass").disabled = !legal("pass");
  $("pass").hidden = !legal("pass");
}

function handCard(name) {
  const slot = el("div", "slot");
  const card = cardFace(name, "button");
  const discard = legal("discard", name);
  if (name === state.hand.drawn) {
    card.classList.add("drawn");
    slot.append(el("span", "drawn-tag", "drawn"));
  }
  card.type = "button";
  card.dataset.action = "discard";
  card.dataset.card = name;
  card.disabled = !discard;
  card.classList.toggle("playable", Boolean(discard));
  if (discard) card.title = `discard ${name}: deadwood ${discard.deadwood}`;
  card.addEventListener("click", () => move("discard", name));
  slot.append(card);
  const knock = legal("knock", name);
  if (knock) {
    const button = el("button", "knock", knock.gin ? "gin" : `knock \u00b7 ${knock.deadwood}`);
    button.type = "button";
    button.dataset.action = "knock";
    button.dataset.card = name;
    button.title = `knock discarding ${name}: deadwood ${knock.deadwood}`;
    button.addEventListener("click", () => move("knock", name));
    slot.append(button);
  }
  return slot;
}

function showHand() {
  const hand = state.hand;
  const groups = hand.melds.map((meld) => {
    const group = el("div", "group meld");
    group.append(...meld.map(handCard));
    return group;
  });
  if (hand.deadwood.length) {
    const group = el("div", "group deadwood");
    group.append(...hand.deadwood.map(handCard));
    groups.push(group);
  }
  $("your-hand").replaceChildren(...groups);
  const dealing = state.dealer === "you" ? " \u00b7 you deal" : "";
  $("your-deadwood").textContent = `\u00b7 deadwood ${hand.deadwood_total}${dealing}`;
}

function showSheet() {
  const head = el("tr");
  head.append(el("th", "", ""), el("th", "", "You"), el("th", "", state.opponent_name), el("th", "", ""));
  const rows = state.sheet.map((g) => {
    const row = el("tr", g.winner ? "closed" : "");
    const status = g.winner ? `won by ${g.winner === "you" ? "you" : state.opponent_name} (net ${g.net})` : "open";
    row.append(el("th", "", g.game), el("td", "", `${g.points[0]} (${g.entered[0]})`),
               el("td", "", `${g.points[1]} (${g.entered[1]})`), el("td", "status", status));
    return row;
  });
  $("sheet").replaceChildren(head, ...rows);
  const r = state.rules;
  $("rules").textContent = `${r.summary} rules \u00b7 points (hands entered) \u00b7 games to ${r.game_target} \u00b7 knock at ${r.knock_limit} or less`;
}

function spreadBlock(spread) {
  const block = el("div", "spread");
  const title = spread.who === "you" ? "You" : state.opponent_name;
  block.append(el("div", "spread-title", `${title} (${spread.role}) \u00b7 deadwood ${spread.deadwood_total}`));
  const cards = el("div", "spread-cards");
  for (const meld of spread.melds) {
    const group = el("div", "group meld");
    group.append(...meld.map((c) => cardFace(c)));
    cards.append(group);
  }
  for (const layoff of spread.layoffs) {
    const group = el("div", "group layoff");
    group.title = `laid off on ${layoff.on.join(" ")}`;
    group.append(el("span", "tag", "laid off"), ...layoff.cards.map((c) => cardFace(c)));
    cards.append(group);
  }
  if (spread.deadwood.length) {
    const group = el("div", "group deadwood");
    group.append(...spread.deadwood.map((c) => cardFace(c)));
    cards.append(group);
  }
  block.append(cards);
  return block;
}

function showHandEnd() {
  const end = state.hand_end;
  $("hand-end").hidden = !end;
  document.body.classList.toggle("hand-over", Boolean(end)); // the page stops at the hand's end (docs/PLAY.md)
  if (!end) return;
  const bot = state.opponent_name;
  const knocker = end.knocker === "you" ? "You" : bot;
  const undercut = end.knocker === "you" ? `${bot} undercuts` : "you undercut";
  const titles = { knock: `${knocker} knocked`, gin: `${knocker} went gin`,
                   undercut: `${knocker} knocked, and ${undercut}`, dead: "a dead hand" };
  $("hand-end-title").textContent = `Hand ${end.hand}: ${titles[end.kind]}`;
  $("spreads").replaceChildren(...end.spreads.map(spreadBlock));
  // the last move, then the result: the score, games closed, the series
  $("hand-end-lines").replaceChildren(...end.lines.map((line, i) => el("li", i ? "result" : "", line)));
  $("series").textContent = state.match_end ? state.match_end.line : "";
  $("next").hidden = Boolean(state.match_end);
  $("next").disabled = !legal("next");
  $("again").hidden = !state.match_end;
}

async function showHint() {
  const on = $("hint-toggle").checked && state.turn === "you";
  $("hint-panel").hidden = !on;
  if (!on) return;
  try {
    const data = await call("GET", `/api/matches/${matchId}/hint`);
    $("hint").replaceChildren(...data.lines.map((line) => el("li", "", line)));
  } catch (error) {
    $("hint").replaceChildren(el("li", "", error.message));
  }
}

function show() {
  document.body.classList.remove("loading");
  const hand = state.hand_end ? state.hand_end.hand : state.hand_number; // the hand the page shows
  $("matchup").textContent = `You vs ${state.opponent} \u00b7 hand ${hand}`;
  showBot();
  showPiles();
  showHand();
  showSheet();
  $("prompt").textContent = state.prompt;
  $("prompt").className = `prompt ${state.turn === "you" ? "yours" : ""}`;
  // a long hand sends only its last moves: a note stands for the earlier ones, and the numbers run on after it
  // (written out, so a number of any length shows whole)
  const earlier = state.earlier_moves ? [el("li", "earlier muted", `\u2026 ${state.earlier_moves} earlier moves`)] : [];
  $("moves").replaceChildren(...earlier, ...state.moves.map((line, i) => {
    const item = el("li", "");
    item.append(el("span", "number", `${state.earlier_moves + i + 1}.`), line);
    return item;
  }));
  $("moves").scrollTop = $("moves").scrollHeight; // the newest move in view
  const save = state.save;
  $("save").textContent = save.error || (save.path ? `Saved after every move to ${save.path}` :
    "Not saved to a file (start with --save FILE to keep it).");
  showHandEnd();
  showHint();
}

async function start() {
  $("stock").addEventListener("click", () => move("draw"));
  $("pass").addEventListener("click", () => move("pass"));
  $("next").addEventListener("click", () => move("next"));
  $("again").addEventListener("click", newMatch);
  $("new-match").addEventListener("click", newMatch);
  $("hint-toggle").addEventListener("change", () => state && showHint());
  $("command-form").addEventListener("submit", typed);
  if (!matchId) return newMatch();
  await act(async () => {
    state = (await call("GET", `/api/matches/${matchId}`)).state;
  });
  if (!state) {
    $("loading").textContent = "This match is not on the server (it was restarted?): start a new match.";
  }
}

start();
