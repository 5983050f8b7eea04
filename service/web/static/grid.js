// The grid variants' table (Hang Ten, Tens, Golf, Basketball) as its viewer sees it: each
// seat's two rows, the stock, the discard piles and the centre card, the card in hand.

import { h, seatName } from "./api.js";
import { cardFace, cardSlot, describe } from "./cards.js";

const AT_CELL = new Set(["setup-flip", "flip", "replace"]);
const BUTTONS = new Set(["discard", "go-out", "end-turn", "peek"]);

function sameDraw(a, source, fromSeat = null) {
  return a.type === "draw" && a.source === source && (a.from_seat ?? null) === fromSeat;
}

function layout(view, seat, legal, onPick) {
  const rows = view.layouts[seat] || [];
  const mine = view.viewer === seat;
  const peeked = mine ? view.peeked || [] : [];
  const grid = h("div", { class: "grid", role: "group", "aria-label": "layout" });
  grid.style.setProperty("--columns", String(rows[0]?.length || 4));
  rows.forEach((row, r) => row.forEach((card, c) => {
    const action = mine ? legal.find((a) => AT_CELL.has(a.type) && a.row === r && a.col === c) : null;
    const seen = peeked.some(([pr, pc]) => pr === r && pc === c);
    grid.append(cardSlot(card, {
      action, onPick, state: card ? (seen ? "face down, peeked" : "face up") : "face down",
      label: `row ${r + 1}, column ${c + 1}, ${card ? "" : "face down"}`.replace(/, $/, ""),
    }));
  }));
  return grid;
}

function pile(cards, label, action, onPick) {
  const top = cards.length ? cards[cards.length - 1] : null;
  if (!top && !action) return h("div", { class: "pile empty" }, h("span", { class: "card none" }), h("small", {}, `${label}: empty`));
  return h("div", { class: "pile" },
    top ? cardSlot(top, { action, onPick, label: `${label}, top card` }) : cardSlot(null, { action, onPick, label }),
    h("small", {}, `${label} (${cards.length})`));
}

export function renderGrid(view, seats, legal, onPick, deadlines) {
  const wrap = h("div", { class: "table grid-table" });
  const shared = view.rules.piles === "shared";
  const centreRow = h("div", { class: "centre", role: "group", "aria-label": "the middle of the table" });
  const stockAction = legal.find((a) => sameDraw(a, "stock"));
  centreRow.append(h("div", { class: "pile" },
    stockAction ? cardSlot(null, { action: stockAction, onPick, label: "the stock" }) : h("span", { class: "slot" }, cardFace(null)),
    h("small", { class: "stock-count" }, `stock: ${view.stock_size}`)));
  if (shared) {
    centreRow.append(pile(view.discard_piles[0] || [], "discard pile", legal.find((a) => sameDraw(a, "discard")), onPick));
  }
  if (view.centre || legal.some((a) => sameDraw(a, "centre"))) {
    centreRow.append(pile(view.centre ? [view.centre] : [], "centre card", legal.find((a) => sameDraw(a, "centre")), onPick));
  }
  if (view.drawn) {
    const whose = view.to_play === view.viewer ? "your card in hand" : `card in hand of seat ${view.to_play + 1}`;
    centreRow.append(h("div", { class: "pile drawn" }, cardSlot(view.drawn, { state: "in hand" }), h("small", {}, whose)));
  } else if (view.to_play !== null && view.to_play === view.viewer && view.step === "place") {
    centreRow.append(h("div", { class: "pile drawn" }, cardSlot(null, { state: "in hand" }), h("small", {}, "your card in hand")));
  }
  wrap.append(centreRow);

  const players = h("div", { class: "seats" });
  view.layouts.forEach((_, seat) => {
    const info = seats[seat] || { seat, name: null, bot: null };
    const turn = view.to_act.includes(seat);
    const box = h("section", {
      class: `seat${turn ? " to-act" : ""}${view.viewer === seat ? " me" : ""}`,
      "aria-label": `seat ${seat + 1}`, dataset: { seat: String(seat) },
    },
      h("h3", {}, h("span", { class: "name" }, seatName(info)),
        view.viewer === seat ? " (you)" : "",
        turn ? h("span", { class: "turn" }, "to act") : "",
        deadlines[seat] ? h("span", { class: "clock", dataset: { deadline: deadlines[seat] } }) : ""),
      h("p", { class: "total" }, `total ${view.totals[seat] ?? 0}`),
      layout(view, seat, legal, onPick));
    if (!shared) {
      const fromSeat = legal.find((a) => sameDraw(a, "pile", seat));
      box.append(pile(view.discard_piles[seat] || [], "discard pile", fromSeat, onPick));
    }
    players.append(box);
  });
  wrap.append(players);
  return wrap;
}

export function gridButtons(legal, onPick) {
  return legal.filter((a) => BUTTONS.has(a.type)).map((a) => h("button", {
    type: "button", class: "legal action", dataset: { action: JSON.stringify(a) }, onclick: () => onPick(a),
  }, describe(a)));
}
