// Card faces drawn with CSS (no images), each with its text alternative.

import { h } from "./api.js";

const RANKS = {
  A: "ace", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
  8: "eight", 9: "nine", T: "ten", J: "jack", Q: "queen", K: "king",
};
const SUITS = {
  S: ["spades", "\u2660"], H: ["hearts", "\u2665"], D: ["diamonds", "\u2666"], C: ["clubs", "\u2663"],
};

export function cardWords(card) {
  if (card === "JK") return "joker";
  return `${RANKS[card[0]]} of ${SUITS[card[1]][0]}`;
}

// `card`: "7H", "JK", or null for a card the viewer may not know (face down).
// `state`: how it lies ("face up", "face down", "peeked", "in hand").
export function cardFace(card, state = card ? "face up" : "face down") {
  if (!card) {
    return h("span", { class: "card back", role: "img", "aria-label": "face down" });
  }
  const label = `${cardWords(card)}, ${state}`;
  if (card === "JK") {
    return h("span", { class: "card joker", role: "img", "aria-label": label },
      h("span", { class: "rank", "aria-hidden": "true" }, "\u2605"),
      h("span", { class: "suit", "aria-hidden": "true" }, "JK"));
  }
  const [, symbol] = SUITS[card[1]];
  const red = card[1] === "H" || card[1] === "D";
  return h("span", { class: `card ${red ? "red" : "black"}`, role: "img", "aria-label": label },
    h("span", { class: "rank", "aria-hidden": "true" }, card[0] === "T" ? "10" : card[0]),
    h("span", { class: "suit", "aria-hidden": "true" }, symbol));
}

// A card (or a pile's place) as the viewer may click it: a button holding the face, with
// `action` the legal action a click posts (or none: shown, not clickable).
export function cardSlot(card, { action = null, state, label = null, onPick, extra = "" } = {}) {
  const face = cardFace(card, state);
  if (!action) return h("span", { class: `slot ${extra}` }, face);
  const words = label || face.getAttribute("aria-label");
  // The button's name is its hidden text (what a click does, and to which card), so that
  // the name holds what a sighted user reads there; the face itself is then left unread.
  face.removeAttribute("role");
  face.removeAttribute("aria-label");
  face.setAttribute("aria-hidden", "true");
  return h("button", {
    class: `slot legal ${extra}`,
    type: "button",
    dataset: { action: JSON.stringify(action) },
    onclick: () => onPick(action),
  }, h("span", { class: "sr-only" }, `${describe(action)}: ${words}`), face);
}

export function describe(action) {
  switch (action.type) {
    case "setup-flip": return "turn up";
    case "flip": return "flip";
    case "replace": return "put the card here";
    case "draw": return action.source === "pile" ? `draw from seat ${action.from_seat + 1}'s pile` : `draw from the ${action.source}`;
    case "discard": return "discard the card";
    case "go-out": return "go out";
    case "end-turn": return "end the turn";
    case "peek": return "peek";
    case "play-blind": return "turn up the stack's face-down card";
    case "end-play": return "end the play (pick up the pile)";
    case "play": return "play";
    case "pick": return "choose for a stack (again to put back)";
    default: return action.type;
  }
}
