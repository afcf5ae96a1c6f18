// The goods printed on each player sheet (the sheet_goods event): "Each player starts with a
// production token of each type of good printed on his player sheet." Which goods a sheet prints
// is not in the rulebook's text, so the players tick them off their sheets: at set-up (the Table
// view) and, to correct a slip, on the Sheet view until the final scoring (what the rules allow).
// Until a sheet is entered, the rules count every good as printed on it; the form says so and
// ticks nothing, so saving it is the players' reading of the sheet, never the page's guess.
"use strict";

window.CT = window.CT || {};
(function (CT) {
  const { el, t, tn } = CT;
  const OPEN_STAGES = ["setup", "tray", "actions", "round_end", "pirate", "final"];

  CT.sheetGoodsOpen = (state) => OPEN_STAGES.includes(state.stage) && state.players.length > 0;

  // What the sheet forms show: they are rebuilt only when this changes (a half-ticked form
  // survives another phone's action).
  CT.sheetGoodsKey = (state) => JSON.stringify([CT.sheetGoodsOpen(state), state.settings.goods,
    state.players.map((p) => [p.name, p.sheet_goods])]);

  function said(player, goods) {
    if (player.sheet_goods === null || player.sheet_goods === undefined) {
      return tn("{player}: not entered yet (until then the {n} good counts as printed)",
        "{player}: not entered yet (until then all {n} goods count as printed)", goods.length,
        { player: player.name });
    }
    return player.sheet_goods.length
      ? t("{player}: {goods}", { player: player.name, goods: player.sheet_goods.map(CT.goodName).join(", ") })
      : t("{player}: no goods", { player: player.name });
  }

  function playerBox(state, player, send) {
    const goods = state.settings.goods || [];
    const entered = player.sheet_goods;
    const boxes = goods.map((good) => el("input", {
      type: "checkbox", value: good, class: "sheet-good", checked: !!(entered && entered.includes(good)),
      // the good in the phone's language, as beside the box ("Baumwolle", not "cotton")
      "aria-label": t("{player}'s sheet prints {good}", { player: player.name, good: CT.goodName(good) }),
    }));
    const save = el("button", {
      type: "submit", class: "cmd secondary save-sheet",
      text: entered ? t("Correct {player}'s sheet", { player: player.name }) : t("Enter {player}'s sheet", { player: player.name }),
    });
    // ticks kept when another phone's entry redraws the forms (game.js's keptForms), unless
    // this player's sheet itself was entered meanwhile: then the form shows that entry
    const form = el("form", { class: "sheet-form", dataset: { keep: `sheet|${player.name}|${JSON.stringify(entered)}` } },
      el("fieldset", { class: "goods" }, el("legend", { text: player.name }),
        boxes.map((box, i) => el("label", { class: "inline-check" }, box, ` ${CT.goodName(goods[i])}`))),
      el("div", { class: "button-row" }, save));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const chosen = boxes.filter((box) => box.checked).map((box) => box.value);
      if (!chosen.length && !await CT.ask(
        t("No good printed on {player}'s sheet? Then {player} starts with no production token.", { player: player.name }))) return;
      send({ type: "sheet_goods", player: player.name, goods: chosen }, save);
    });
    return el("div", { class: "sheet-goods-player", dataset: { player: player.name } },
      el("p", { class: "sheet-said", text: said(player, goods) }), form);
  }

  // The form, one block per player in player order; send(command, button) as game.js's.
  CT.sheetGoods = function sheetGoods(game, send) {
    const state = game.state;
    const order = state.player_order && state.player_order.length ? state.player_order : state.players.map((p) => p.name);
    const byName = Object.fromEntries(state.players.map((p) => [p.name, p]));
    return el("div", { class: "sheet-goods" },
      el("p", { class: "muted", text: t("Tick the goods printed on each player's sheet: each player starts with one production token of each.") }),
      order.map((name) => playerBox(state, byName[name], send)));
  };
})(window.CT);
