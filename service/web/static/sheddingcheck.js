// Every card a Tens-shedding round's events show, against the deal its seed makes
// (docs/SHUFFLE.md sections 5 and 6): the face-up stack cards each seat lays must come from
// the 15 it was dealt, a blind card turned must be the face-down card the deal put on that
// stack, a card played from the hand must be one the hand holds (dealt, or picked up with
// the pile), a stack card played must be the one laid there, and a burned or picked-up pile
// must be exactly the cards played onto it. The first play is the seat whose grab is
// closest to 19. The replay's fairness panel and the export check both use it.

const EXACT_GRAB = 19;

function firstPlayer(grabs) {
  let best = 0;
  grabs.forEach((grab, seat) => {
    if (Math.abs(grab - EXACT_GRAB) < Math.abs(grabs[best] - EXACT_GRAB)) best = seat;
  });
  return best;
}

function take(cards, card) {
  const at = cards.indexOf(card);
  if (at < 0) return false;
  cards.splice(at, 1);
  return true;
}

function sameList(a, b) {
  return a.length === b.length && a.every((card, i) => card === b[i]);
}

// `derived` is `derive(...)` of fairness.js for the round; `events` its events after
// hand.dealt, each `{ where, type, data }` (`where` names it: "version 12", "step 3").
// Returns the failures, each naming the hand, the seat and the card, and how many cards
// the events showed.
export function sheddingPlays(hand, derived, events) {
  const failures = [];
  const seats = derived.seats.map((s) => ({ hand: [...s.hand], faceUp: [null, null, null, null], faceDown: [...s.faceDown] }));
  const first = firstPlayer(derived.grabs);
  let pile = [];
  let shown = 0;
  let played = false;
  const fail = (where, seat, text) => failures.push(`${where}: hand ${hand}, seat ${seat + 1}: ${text}`);
  for (const { where, type, data } of events) {
    if (type === "hand.dealt" || type === "hand.ended") break;
    const seat = data.seat;
    const mine = seats[seat];
    if (!mine && ["stacks.chosen", "cards.played", "blind.card.turned", "pile.picked.up"].includes(type)) {
      fail(where, seat ?? -1, `${type} names a seat the game does not have`);
      continue;
    }
    if ((type === "cards.played" || type === "blind.card.turned") && !played) {
      played = true;
      if (seat !== first) fail(where, seat, `plays first, but the grabs (${derived.grabs.join(", ")}) say seat ${first + 1}`);
    }
    if (type === "stacks.chosen") {
      data.cards.forEach((card, stack) => {
        shown += 1;
        if (!take(mine.hand, card)) fail(where, seat, `lays ${card} on stack ${stack + 1}, which the deal did not give it (its cards to choose from: ${mine.hand.join(" ")})`);
        mine.faceUp[stack] = card;
      });
    } else if (type === "cards.played") {
      for (const card of data.hand || []) {
        shown += 1;
        if (!take(mine.hand, card)) fail(where, seat, `plays ${card} from its hand, which holds no ${card} by the deal and the piles it picked up`);
      }
      (data.stacks || []).forEach((stack, i) => {
        const card = (data.stack_cards || [])[i];
        shown += 1;
        if (mine.faceUp[stack] !== card) fail(where, seat, `plays ${card} from stack ${stack + 1}, where it laid ${mine.faceUp[stack] ?? "nothing"}`);
        mine.faceUp[stack] = null;
      });
      pile = [...pile, ...(data.hand || []), ...(data.stack_cards || [])];
    } else if (type === "blind.card.turned") {
      shown += 1;
      const dealt = mine.faceDown[data.stack];
      if (data.card !== dealt) fail(where, seat, `turns ${data.card} from stack ${data.stack + 1}, the deal put ${dealt ?? "nothing"} face down there`);
      mine.faceDown[data.stack] = null;
      pile = [...pile, data.card];
    } else if (type === "pile.burned" || type === "pile.picked.up") {
      shown += data.cards.length;
      if (!sameList(data.cards, pile)) {
        const text = `${type} names ${data.cards.join(" ") || "nothing"}, the pile was ${pile.join(" ") || "empty"}`;
        if (mine) fail(where, seat, text);
        else failures.push(`${where}: hand ${hand}: ${text}`);
      }
      if (type === "pile.picked.up" && mine) mine.hand.push(...data.cards);
      pile = [];
    }
  }
  return { failures, shown };
}
