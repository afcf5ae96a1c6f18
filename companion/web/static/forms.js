// Forms: a small DOM helper, the 7-colour counts editor and the action details form.
// Everything players typed (names, islands) goes into the page as text, never as HTML.
"use strict";

window.CT = window.CT || {};
(function (CT) {
  const COLOURS = ["blue", "black", "red", "brown", "green", "yellow", "white"];
  CT.COLOURS = COLOURS;
  const { t, tn, colourName } = CT;
  let uid = 0;
  CT.uid = (prefix) => `${prefix}-${++uid}`;

  // el("button", {class: "x", text: "Go", onclick: fn, "aria-label": "..."}, child, ...)
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else if (key === "dataset") Object.assign(node.dataset, value);
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "value") node.value = value;
      else if (key === "checked") node.checked = true;
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(typeof child === "string" || typeof child === "number" ? String(child) : child);
    }
    return node;
  }
  CT.el = el;

  // The counter's warnings for a player: each once, at most two, and how many more there are
  // (the picture marks them all).
  CT.fewWarnings = function fewWarnings(warnings) {
    const unique = [...new Set((warnings || []).map((w) => String(w).trim()).filter(Boolean))];
    const more = unique.length - 2;
    return unique.slice(0, 2).join("; ") + (more > 0 ? ` ${t("(and {n} more on the picture)", { n: more })}` : "");
  };

  CT.swatch = (colour) => el("span", { class: `swatch ${colour}`, "aria-hidden": "true" });

  // Counts in words, the colours with cubes only: "3 blue, 1 white" ("" when there are none).
  CT.countsText = (counts) => COLOURS.filter((c) => (counts[c] || 0) > 0)
    .map((c) => t("{n} {colour}", { n: counts[c], colour: colourName(c) })).join(", ");

  // A labelled field: label text above (or beside, for checkboxes) the input.
  function field(labelText, input, extraClass) {
    input.id = input.id || CT.uid("f");
    const label = el("label", { for: input.id, text: labelText });
    if (input.type === "checkbox") return el("div", { class: `field check ${extraClass || ""}` }, input, label);
    return el("div", { class: `field ${extraClass || ""}` }, label, input);
  }
  CT.field = field;

  function numberInput(props) {
    return el("input", { type: "number", inputmode: "numeric", min: 0, ...props });
  }
  CT.numberInput = numberInput;

  function select(options, props) {
    const node = el("select", props || {});
    for (const option of options) {
      const [value, text] = Array.isArray(option) ? option : [option, option];
      node.append(el("option", { value, text }));
    }
    return node;
  }
  CT.select = select;

  // A number field's value as typed: null when blank, else the number, or the text when it is
  // none. A "-2", "2.5" or "abc" goes to the server, whose refusal names it, rather than being
  // turned into another number (or dropped) without a word.
  function typedValue(input) {
    const text = String(input.value).trim();
    if (text === "") return null;
    const n = Number(text);
    return Number.isFinite(n) ? n : text;
  }
  CT.typedValue = typedValue;

  // A count field as typed: null when blank, the number for a plain whole number ("3"), else
  // NaN: "1e1" (which Number reads as 10), "-2", "1.5", and what the browser refused itself
  // ("1e", "-"), whose value then reads as "" (only validity.badInput tells it from a blank).
  function typedCount(input) {
    if (input.validity && input.validity.badInput) return NaN;
    const text = String(input.value).trim();
    if (text === "") return null;
    return /^[0-9]+$/.test(text) ? Number(text) : NaN;
  }

  // For the page's own sums and steps only: a count, or 0.
  const countOf = (input) => { const n = typedCount(input); return Number.isNaN(n) ? 0 : n ?? 0; };

  // The counts editor: one row per colour with - / number / + ; value() gives {colour: n}.
  CT.countsEditor = function countsEditor(initial, bounds) {
    const inputs = {};
    const rows = COLOURS.map((colour) => {
      const limit = bounds && bounds[colour] !== undefined ? bounds[colour] : null;
      const input = numberInput({
        max: limit === null ? 49 : limit, value: (initial && initial[colour]) || 0,
        "aria-label": t("{colour} cubes", { colour: colourName(colour) }),
        dataset: { colour }, class: "count-input",
      });
      inputs[colour] = input;
      const step = (d) => () => {
        input.value = Math.max(0, countOf(input) + d);
        input.dispatchEvent(new Event("input"));
      };
      return el("div", { class: "count-row" },
        CT.swatch(colour), el("span", { class: "name" }, colourName(colour),
          limit === null ? null : el("small", {
            class: "limit", text: ` ≤ ${limit}`,
            title: t("{n} {colour} inside the tower", { n: limit, colour: colourName(colour) }),
          })),
        el("button", { type: "button", class: "step", "aria-label": t("one {colour} less", { colour: colourName(colour) }), text: "−", onclick: step(-1) }),
        input,
        el("button", { type: "button", class: "step", "aria-label": t("one {colour} more", { colour: colourName(colour) }), text: "+", onclick: step(1) }));
    });
    const total = el("p", { class: "muted total" });
    const update = () => {
      // a typed value that is no count (-2, 1.5, 1e1, "1e") is named, not summed as 0 or as itself
      const bad = COLOURS.filter((c) => Number.isNaN(typedCount(inputs[c])));
      if (bad.length) {
        total.textContent = t("not a number of cubes: {colours}",
          { colours: bad.map((c) => colourName(c)).join(", ") });
      } else {
        const n = COLOURS.reduce((sum, c) => sum + countOf(inputs[c]), 0);
        total.textContent = tn("{n} cube", "{n} cubes", n);
      }
      total.classList.toggle("not-a-count", bad.length > 0);
    };
    for (const input of Object.values(inputs)) input.addEventListener("input", update);
    update();
    const node = el("div", { class: "counts-editor" }, rows, total);
    return {
      node,
      bad() {  // what the total names as no count ("" when every field is one)
        update();
        return total.classList.contains("not-a-count") ? total.textContent : "";
      },
      value() {  // a blank is none of the colour (sent only when no field is bad)
        const counts = {};
        for (const colour of COLOURS) counts[colour] = countOf(inputs[colour]);
        return counts;
      },
    };
  };

  // A counts editor inside a small form with a submit button: onSubmit(counts, button).
  CT.countsForm = function countsForm(initial, submitText, onSubmit, onCancel, bounds) {
    const editor = CT.countsEditor(initial, bounds);
    const submit = el("button", { type: "submit", class: "cmd primary", text: submitText });
    const form = el("form", { class: "sub-form counts-form" }, editor.node,
      el("div", { class: "button-row" }, submit,
        onCancel ? el("button", { type: "button", class: "secondary", text: t("Cancel"), onclick: onCancel }) : null));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      for (const old of form.querySelectorAll(".refusal")) old.remove();
      // a field that is no count is not sent as some other number (a refused "1e" reads as
      // blank, "1e1" as 10): the form says which, by its button, and sends nothing
      const bad = editor.bad();
      if (bad) {
        submit.closest(".button-row").after(el("p", { class: "refusal", role: "alert", text: bad }));
        return;
      }
      onSubmit(editor.value(), submit);
    });
    return form;
  };

  // --- progress tokens (docs/events.md's token table) ----------------------------------
  const SIMPLE_TOKENS = [
    ["ships8", t("Move Ships: +8 AP per ship this phase")],
    ["pirates_plus2", t("pirates +2 for all others")],
    ["pirates_half", t("lose only half VP to pirates")],
    ["pirates_gold", t("2 gold when pirates fought off")],
    ["plan_two", t("Plan: two neutral landscapes")],
    ["swap_green_red", t("green counts as red and red as green")],
    ["order_jump", t("white: on top of the first player")],
    ["gold3", t("once: 3 gold")],
    ["gold5", t("once: 5 gold")],
    ["gold_per_post", t("1 gold per trading post")],
    ["gold_half", t("gold instead: 1 per 2 cubes")],
    ["vp_instead", t("VP instead of an action")],
    ["vp_posts", t("final: 1 VP per post")],
    ["vp7", t("final: 7 VP")],
    ["vp_gold", t("final: VP = gold track")],
  ];
  CT.TOKEN_TEXT = Object.fromEntries(SIMPLE_TOKENS);
  // What a token does, for the players (its name, e.g. "ap1:red+green", is the log's word)
  CT.tokenLabel = (name) => {
    if (name.startsWith("ap2:")) return t("+2 AP on {colour}", { colour: colourName(name.slice(4)) });
    if (name.startsWith("ap1:")) {
      const [a, b] = name.slice(4).split("+");
      return t("+1 AP on {colour} or {other}", { colour: colourName(a), other: colourName(b) });
    }
    return CT.TOKEN_TEXT[name] || name;
  };

  function tokenRow() {
    const kind = select([
      ["", t("— which token? —")],
      ["ap2", t("+2 AP for one action (ap2)")], ["ap1", t("+1 AP for two actions (ap1)")],
      ...SIMPLE_TOKENS.map(([name, text]) => [name, `${name}: ${text}`]),
    ], { "aria-label": t("token"), class: "token-kind" });
    const colours = COLOURS.map((c) => [c, colourName(c)]);
    const c1 = select(colours, { "aria-label": t("token colour"), class: "token-colour" });
    const c2 = select(colours, { "aria-label": t("second token colour"), class: "token-colour2" });
    c2.value = "green";
    const sync = () => {
      c1.hidden = !kind.value.startsWith("ap");
      c2.hidden = kind.value !== "ap1";
    };
    kind.addEventListener("change", sync);
    sync();
    const row = rowBox(kind, c1, c2);
    row.value = () => {
      if (!kind.value) return null;
      if (kind.value === "ap2") return `ap2:${c1.value}`;
      if (kind.value === "ap1") return `ap1:${c1.value}+${c2.value}`;
      return kind.value;
    };
    return row;
  }

  function rowBox(...children) {
    const row = el("div", { class: "row" }, children);
    row.append(el("button", {
      type: "button", class: "remove", text: "✕", "aria-label": t("remove this row"),
      onclick: () => row.remove(),
    }));
    return row;
  }

  // A list of rows with an "add" button; rows() gives the row nodes still there.
  function rowList(title, addText, makeRow) {
    const rows = el("div", { class: "rows" });
    const add = el("button", {
      type: "button", class: "secondary add", text: addText,
      onclick: () => { const r = makeRow(); rows.append(r); const f = r.querySelector("input,select"); if (f) f.focus(); },
    });
    const box = el("fieldset", { class: "rowlist" }, el("legend", { text: title }), rows, add);
    box.rows = () => [...rows.children];
    box.addRow = () => { const r = makeRow(); rows.append(r); return r; };
    return box;
  }

  function islandInput(listId, label) {
    return el("input", {
      type: "text", list: listId, "aria-label": label || t("island"), placeholder: t("island"),
      autocomplete: "off", autocapitalize: "characters", class: "island",
    });
  }

  function bigBox(islands, island) {
    const big = el("input", { type: "checkbox", "aria-label": t("big island (20+ spaces)"), class: "big" });
    const wrap = el("label", { class: "inline-check" }, big, ` ${t("big")}`);
    island.addEventListener("input", () => {
      const known = islands[island.value.trim()];
      if (known) big.checked = !!known.big;
      big.disabled = !!known;
    });
    wrap.big = big;
    return wrap;
  }

  CT.actionKey = (player, action) => `${player}|${action.colour}|${action.via}`;

  // What a half-filled form holds, to be put back into the same form drawn anew (another phone
  // changed the game, or this one cashed a chest to pay for AP): how many rows each row list
  // has, and each field's value by its name (the nth field of that name).
  function fieldName(node) {
    return node.name || node.getAttribute("aria-label") || node.className || node.type;
  }
  function fieldsOf(form) {
    const seen = {};
    return [...form.querySelectorAll("input, select, textarea")].map((node) => {
      const name = fieldName(node);
      seen[name] = (seen[name] || 0) + 1;
      return [`${name}#${seen[name]}`, node];
    });
  }
  CT.formState = (form) => ({
    rows: [...form.querySelectorAll("fieldset.rowlist")].map((box) => box.rows().length),
    fields: Object.fromEntries(fieldsOf(form).map(([key, node]) =>
      [key, node.type === "checkbox" ? node.checked : node.value])),
  });
  CT.restoreForm = (form, saved) => {
    [...form.querySelectorAll("fieldset.rowlist")].forEach((box, i) => {
      while (box.rows().length < (saved.rows[i] || 0)) box.addRow();
    });
    for (const [key, node] of fieldsOf(form)) {
      if (!(key in saved.fields) || node.disabled) continue;
      if (node.type === "checkbox") node.checked = saved.fields[key];
      else node.value = saved.fields[key];
      node.dispatchEvent(new Event("input"));
      node.dispatchEvent(new Event("change"));
    }
  };

  // The details form for one colour action. onSubmit(command, button).
  CT.actionForm = function actionForm(game, player, action, onSubmit, onCancel) {
    const state = game.state;
    const opts = state.options[player];
    const me = state.players.find((p) => p.name === player) || {};
    const islands = state.islands || {};
    const holds = (token) => (me.progress_tokens || []).some((t) => t.name === token && !t.used);
    const listId = CT.uid("islands");
    const datalist = el("datalist", { id: listId }, Object.keys(islands).map((n) => el("option", { value: n })));
    const parts = [datalist];
    const readers = []; // each adds its fields to the command

    const ap = numberInput({ max: action.ap + (opts.gold_to_buy_ap || 0), placeholder: t("all ({n})", { n: action.ap }), name: "ap" });
    parts.push(field(t("AP to spend ({n} available)", { n: action.ap }), ap));
    readers.push((cmd) => { const n = typedValue(ap); if (n !== null) cmd.ap = n; });
    if (opts.gold_to_buy_ap > 0) {
      const gold = numberInput({ max: opts.gold_to_buy_ap, placeholder: "0", name: "gold_spent" });
      parts.push(field(t("Gold paid for extra AP (up to {n})", { n: opts.gold_to_buy_ap }), gold));
      readers.push((cmd) => { const n = typedValue(gold); if (n) cmd.gold_spent = n; });
    }

    const colour = action.colour;
    const completes = () => {
      const input = islandInput(listId, t("island completed"));
      parts.push(field(t("Completes island (optional)"), input));
      readers.push((cmd) => { if (input.value.trim()) cmd.completes = input.value.trim(); });
    };

    if (colour === "blue") {
      const posts = rowList(t("Trading posts"), t("+ Add a trading post"), () => {
        const island = islandInput(listId);
        const big = bigBox(islands, island);
        const row = rowBox(island, big);
        row.value = () => island.value.trim() ? { island: island.value.trim(), big: big.big.checked } : null;
        return row;
      });
      posts.addRow();
      parts.push(posts);
      readers.push((cmd) => {
        const list = posts.rows().map((r) => r.value()).filter(Boolean);
        if (list.length) cmd.posts = list;
      });
      completes();
      if (holds("ships8")) {
        const ships = el("input", { type: "checkbox", name: "ships8" });
        parts.push(field(t("Use the ship token (+8 AP per ship)"), ships));
        readers.push((cmd) => { if (ships.checked) cmd.tokens_used = ["ships8"]; });
      }
    } else if (colour === "red") {
      const take = rowList(t("Tiles planned"), t("+ Add a tile"), () => {
        const tile = select([["", t("— tile —")], ["village", t("village (1 AP)")], ["landscape", t("landscape")]], { "aria-label": t("tile") });
        const size = select([1, 2, 3, 4, 5, 6].map((n) => [n, t("size {n}", { n })]), { "aria-label": t("landscape size") });
        const sync = () => { size.hidden = tile.value !== "landscape"; };
        tile.addEventListener("change", sync);
        sync();
        const row = rowBox(tile, size);
        row.value = () => !tile.value ? null
          : tile.value === "landscape" ? { tile: "landscape", size: Number(size.value) } : { tile: "village" };
        return row;
      });
      take.addRow();
      parts.push(take);
      readers.push((cmd) => { const list = take.rows().map((r) => r.value()).filter(Boolean); if (list.length) cmd.take = list; });
    } else if (colour === "brown") {
      const tokens = rowList(t("Progress tokens taken"), t("+ Add a token"), tokenRow);
      parts.push(tokens);
      readers.push((cmd) => { const list = tokens.rows().map((r) => r.value()).filter(Boolean); if (list.length) cmd.tokens_taken = list; });
      const atEnd = el("input", { type: "checkbox", name: "at_end" });
      parts.push(field(t("The disc reaches the end of the progress track"), atEnd));
      readers.push((cmd) => { if (atEnd.checked) cmd.at_end = true; });
    } else if (colour === "green") {
      const build = rowList(t("Tiles built"), t("+ Add a tile"), () => {
        const island = islandInput(listId);
        const big = bigBox(islands, island);
        const tile = select([["village", t("village")], ["landscape", t("landscape")]], { "aria-label": t("tile") });
        const size = select([1, 2, 3, 4, 5, 6].map((n) => [n, t("size {n}", { n })]), { "aria-label": t("landscape size") });
        const vp = numberInput({ "aria-label": t("printed VP"), placeholder: t("VP"), class: "vp" });
        const sync = () => { size.hidden = tile.value !== "landscape"; };
        tile.addEventListener("change", sync);
        sync();
        // "VP" beside the box, not only as its placeholder: once a number is typed it says what it is
        const vpLabel = el("label", { class: "inline-check" }, vp, ` ${t("VP")}`);
        const row = rowBox(island, big, tile, size, vpLabel);
        row.value = () => {
          if (!island.value.trim()) return null;
          const name = island.value.trim();
          const out = { island: name, tile: tile.value, vp: typedValue(vp) || 0 };
          if (!islands[name]) out.big = big.big.checked;
          if (tile.value === "landscape") out.size = Number(size.value);
          return out;
        };
        return row;
      });
      build.addRow();
      parts.push(build);
      readers.push((cmd) => { const list = build.rows().map((r) => r.value()).filter(Boolean); if (list.length) cmd.build = list; });
      completes();
      const goods = {};
      const goodsBox = el("fieldset", { class: "goods" }, el("legend", { text: t("Commodities built over") }),
        (state.settings.goods || []).map((good) => {
          goods[good] = numberInput({ max: 9, placeholder: "0", "aria-label": t("{good} commodities", { good: CT.goodName(good) }) });
          return el("label", { class: "good" }, el("span", { text: CT.goodName(good) }), goods[good]);
        }));
      parts.push(goodsBox);
      readers.push((cmd) => {
        const out = {};
        for (const [good, input] of Object.entries(goods)) { const n = typedValue(input); if (n) out[good] = n; }
        if (Object.keys(out).length) cmd.commodities = out;
      });
    } else if (colour === "yellow") {
      const production = rowList(t("Production tokens bought"), t("+ Add a token"), () => {
        const good = select([["", t("— good —")], ...(state.settings.goods || []).map((g) => [g, CT.goodName(g)])], { "aria-label": t("good") });
        const cost = select([2, 3, 4].map((n) => [n, t("cost {n}", { n })]), { "aria-label": t("cost") });
        const row = rowBox(good, cost);
        row.value = () => good.value ? { good: good.value, cost: Number(cost.value) } : null;
        return row;
      });
      production.addRow();
      parts.push(production);
      readers.push((cmd) => { const list = production.rows().map((r) => r.value()).filter(Boolean); if (list.length) cmd.production = list; });
    } else if (colour === "white") {
      const advance = numberInput({ placeholder: t("= AP"), name: "advance" });
      parts.push(field(t("Spaces to advance on the special track"), advance));
      readers.push((cmd) => { const n = typedValue(advance); if (n !== null) cmd.advance = n; });
      if (holds("order_jump")) {
        const jump = el("input", { type: "checkbox", name: "jump" });
        parts.push(field(t("Use the token: put the disc on top of the first player's disc"), jump));
        readers.push((cmd) => { if (jump.checked) cmd.jump = true; });
      }
      const atEnd = el("input", { type: "checkbox", name: "at_end" });
      parts.push(field(t("The disc reaches the end of the special track"), atEnd));
      readers.push((cmd) => { if (atEnd.checked) cmd.at_end = true; });
    }

    const submit = el("button", { type: "submit", class: "cmd primary" },
      CT.swatch(colour), ` ${player}: ${action.name}`);
    const heading = action.via !== "tray"
      ? t("{action} ({colour}, via {via})", { action: action.name, colour: colourName(colour), via: action.via === "white" ? colourName("white") : t("the green/red token") })
      : t("{action} ({colour})", { action: action.name, colour: colourName(colour) });
    const form = el("form", { class: `sub-form action-form ${colour}`, dataset: { colour, key: CT.actionKey(player, action) } },
      el("h3", {}, CT.swatch(colour), ` ${heading}`),
      parts,
      el("div", { class: "button-row" }, submit,
        el("button", { type: "button", class: "secondary", text: t("Cancel"), onclick: onCancel })));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const cmd = { type: "action", player, choice: colour };
      if (action.via && action.via !== "tray") cmd.via = action.via;
      for (const read of readers) read(cmd);
      onSubmit(cmd, submit);
    });
    return form;
  };
})(window.CT);
