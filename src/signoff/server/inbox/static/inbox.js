// signoff inbox: live cards (Server-Sent Events), card panels, countdowns, keyboard shortcuts.
// No framework and no build step; htmx (vendored next to this file) does the form posts.
(function () {
  "use strict";

  const EVENT_TYPES = ["created", "updated", "decided", "expired", "cancelled"];
  const OPEN = new Set(["pending", "drafting"]);
  const RETIRE_AFTER_MS = 1500;
  const RECENT_LIMIT = 20;
  const RECONNECT_MS = 4000;

  let selectedId = null;
  let lastSeq = null;

  // ---- finding things --------------------------------------------------------------------

  const pendingList = () => document.getElementById("pending");
  const cardOf = (element) => (element ? element.closest(".card") : null);
  const isOpen = (card) => OPEN.has(card.dataset.status);

  function navigableCards() {
    const list = pendingList();
    const scope = list || document;
    return Array.from(scope.querySelectorAll(".card"));
  }

  function selectedCard() {
    return selectedId ? document.getElementById("card-" + selectedId) : null;
  }

  function isTyping(target) {
    if (target instanceof HTMLInputElement && target.type === "checkbox") return false; // a card's batch tick
    return (
      target instanceof HTMLElement &&
      (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))
    );
  }

  // ---- selection and panels --------------------------------------------------------------

  function select(card, focus) {
    document.querySelectorAll(".card.selected").forEach((other) => other.classList.remove("selected"));
    if (!card) {
      selectedId = null;
      return;
    }
    selectedId = card.dataset.id;
    card.classList.add("selected");
    if (focus) {
      card.focus({ preventScroll: true });
      card.scrollIntoView({ block: "nearest", behavior: "smooth" });
    }
  }

  function move(step) {
    const cards = navigableCards();
    if (!cards.length) return;
    const current = cards.indexOf(selectedCard());
    const next = current < 0 ? (step > 0 ? 0 : cards.length - 1) : current + step;
    select(cards[Math.max(0, Math.min(cards.length - 1, next))], true);
  }

  function openPanel(card, kind, toggle) {
    let shown = null;
    card.querySelectorAll("[data-panel]").forEach((panel) => {
      const show = panel.dataset.panel === kind && (!toggle || panel.hidden);
      panel.hidden = !show;
      if (show) shown = panel;
    });
    card.querySelectorAll("[data-open]").forEach((button) => {
      button.setAttribute("aria-expanded", String(shown !== null && button.dataset.open === kind));
    });
    if (shown) {
      const panel = shown;
      const ready = panel.dataset.src && !panel.dataset.loaded ? loadPanel(panel) : Promise.resolve();
      ready.then(() => {
        if (panel.hidden) return;
        const field = panel.querySelector("[data-focus], input:not([type=hidden]), textarea, select");
        if (field) field.focus();
        panel.scrollIntoView({ block: "nearest", behavior: "smooth" });
      });
    }
    return shown;
  }

  async function loadPanel(panel) {
    // the edit and respond forms of a card in a list are fetched when first opened
    panel.dataset.loaded = "loading";
    const response = await fetch(panel.dataset.src, { headers: { "HX-Request": "true" }, credentials: "same-origin" });
    if (response.status === 401) {
      window.location.assign("/login");
      return;
    }
    if (!response.ok) {
      delete panel.dataset.loaded;
      panel.innerHTML = '<p class="card-error" role="alert">The form could not be loaded. Reload the page and try again.</p>';
      return;
    }
    panel.innerHTML = await response.text();
    panel.dataset.loaded = "yes";
    if (window.htmx) window.htmx.process(panel);
  }

  function closePanels(card) {
    card.querySelectorAll("[data-panel]").forEach((panel) => {
      panel.hidden = true;
    });
    card.querySelectorAll("[data-open]").forEach((button) => button.setAttribute("aria-expanded", "false"));
  }

  function hasOpenPanel(card) {
    return Array.from(card.querySelectorAll("[data-panel]")).some((panel) => !panel.hidden);
  }

  // ---- placing cards ---------------------------------------------------------------------

  function parseCard(html) {
    const template = document.createElement("template");
    template.innerHTML = html.trim();
    const card = template.content.querySelector(".card");
    return card ? document.importNode(card, true) : null;
  }

  function insertByAge(list, card) {
    // newest first: ids sort by creation time
    const older = Array.from(list.querySelectorAll(":scope > .card")).find((other) => other.dataset.id < card.dataset.id);
    const loadMore = list.querySelector(":scope > .load-more");
    list.insertBefore(card, older || loadMore || null);
  }

  function place(card) {
    const existing = document.getElementById(card.id);
    const wasSelected = existing && existing.dataset.id === selectedId;
    const hadFocus = existing && existing.contains(document.activeElement);
    if (existing) {
      existing.replaceWith(card);
    } else {
      const list = pendingList();
      if (!list) return;
      insertByAge(list, card);
      card.classList.add("arrived");
    }
    if (window.htmx) window.htmx.process(card);
    if (wasSelected) select(card, hadFocus);
    if (hadFocus) decided(card);
    settle(card);
  }

  function nextAfter(card) {
    // the open card after this one in the list (or, at its end, the one before)
    const cards = navigableCards();
    const index = cards.indexOf(card);
    const open = (other) => other !== card && isOpen(other);
    return cards.slice(index + 1).find(open) || cards.slice(0, Math.max(index, 0)).reverse().find(open) || null;
  }

  function announce(text) {
    const region = document.getElementById("announce");
    if (region && text) region.textContent = text;
  }

  function decided(card) {
    // the selected card was just decided: say how, and go on to the next one
    const list = pendingList();
    if (!list || !list.contains(card) || isOpen(card) || card.dataset.id !== selectedId) return;
    const said = [".card-error", ".notice", ".outcome strong"].map((part) => card.querySelector(part)).find(Boolean);
    const title = card.querySelector(".tool");
    const next = nextAfter(card);
    announce([title && title.textContent, said && said.textContent].filter(Boolean).join(": "));
    if (next) select(next, true);
  }

  function settle(card) {
    const list = pendingList();
    if (list && list.contains(card) && !isOpen(card)) {
      window.setTimeout(() => retire(card), RETIRE_AFTER_MS);
    }
    showEmptyState();
  }

  function retire(card) {
    const list = pendingList();
    const recent = document.getElementById("recent");
    if (!list || !recent || !card.isConnected || !list.contains(card) || isOpen(card)) return;
    const cards = navigableCards();
    const index = cards.indexOf(card);
    const wasSelected = card.dataset.id === selectedId;
    recent.prepend(card);
    card.classList.remove("selected");
    Array.from(recent.children).slice(RECENT_LIMIT).forEach((old) => old.remove());
    document.getElementById("recent-section").hidden = false;
    if (wasSelected) {
      const rest = navigableCards();
      select(rest[Math.min(index, rest.length - 1)] || null, rest.length > 0);
    }
    showEmptyState();
  }

  function showEmptyState() {
    const list = pendingList();
    const empty = document.getElementById("inbox-empty");
    if (list && empty) empty.hidden = list.querySelector(".card") !== null;
  }

  async function refreshCard(id, status) {
    const existing = document.getElementById("card-" + id);
    if (!existing && (!pendingList() || !OPEN.has(status))) return;
    if (existing && status === "pending" && existing.dataset.status === "pending" && hasOpenPanel(existing)) {
      return; // the person is typing in this card; nothing they need has changed
    }
    const full = existing && existing.closest(".request-main") ? "?full=1" : "";
    const response = await fetch("/inbox/cards/" + encodeURIComponent(id) + full, {
      headers: { "HX-Request": "true" },
      credentials: "same-origin",
    });
    if (response.status === 401) {
      window.location.assign("/login");
      return;
    }
    if (!response.ok) return;
    const card = parseCard(await response.text());
    if (card) place(card);
  }

  // ---- the waiting count in the nav -------------------------------------------------------

  let countTimer = null;
  function refreshCount() {
    window.clearTimeout(countTimer);
    countTimer = window.setTimeout(async () => {
      const badge = document.getElementById("waiting-count");
      if (!badge) return;
      const response = await fetch("/inbox/count", { credentials: "same-origin" });
      if (!response.ok) return;
      const text = (await response.text()).trim();
      badge.textContent = text === "0" ? "" : text;
    }, 300);
  }

  // ---- live events -----------------------------------------------------------------------

  function setLiveState(state, text) {
    const badge = document.getElementById("live-state");
    if (!badge) return;
    badge.dataset.state = state;
    badge.textContent = text;
  }

  function connect() {
    const after = lastSeq !== null ? lastSeq : document.body.dataset.eventsAfter;
    const source = new EventSource("/v1/events" + (after ? "?after=" + encodeURIComponent(after) : ""));
    const onEvent = (event) => {
      if (event.lastEventId) lastSeq = event.lastEventId;
      let data;
      try {
        data = JSON.parse(event.data);
      } catch (error) {
        return;
      }
      refreshCard(data.request.id, data.request.status);
      refreshCount();
    };
    EVENT_TYPES.forEach((type) => source.addEventListener(type, onEvent));
    source.addEventListener("open", () => setLiveState("live", "live"));
    source.addEventListener("error", async () => {
      if (source.readyState !== EventSource.CLOSED) {
        setLiveState("reconnecting", "reconnecting…");
        return;
      }
      setLiveState("offline", "offline");
      const check = await fetch("/inbox/count", { headers: { "HX-Request": "true" }, credentials: "same-origin" }).catch(() => null);
      if (check && check.status === 401) {
        window.location.assign("/login");
        return;
      }
      window.setTimeout(connect, RECONNECT_MS);
    });
  }

  // ---- countdowns ------------------------------------------------------------------------

  function durationText(seconds) {
    seconds = Math.floor(Math.abs(seconds));
    if (seconds < 60) return seconds + "s";
    let minutes = Math.floor(seconds / 60);
    if (minutes < 60) return minutes + "m";
    let hours = Math.floor(minutes / 60);
    minutes %= 60;
    if (hours < 24) return minutes ? hours + "h " + minutes + "m" : hours + "h";
    const days = Math.floor(hours / 24);
    hours %= 24;
    return hours ? days + "d " + hours + "h" : days + "d";
  }

  function tick() {
    const now = Date.now();
    document.querySelectorAll("time.countdown[datetime]").forEach((element) => {
      const left = (Date.parse(element.getAttribute("datetime")) - now) / 1000;
      if (Number.isNaN(left)) return;
      element.textContent = left > 0 ? durationText(left) + " left" : "past its deadline";
      element.classList.toggle("soon", left > 0 && left < 600);
      element.classList.toggle("late", left <= 0);
    });
  }

  // ---- approving a destructive call from the keyboard asks once more ----------------------
  // A card whose rule says `confirm` (or whose tool says it is destructive) has data-confirm on
  // its Approve button. A click that did not come from a pointer (the `a` shortcut, Enter or
  // Space on the button) opens this dialog instead of deciding; its Approve decides, Cancel or
  // Esc goes back to the card. Focus starts on Cancel, the choice that changes nothing.

  let confirming = null;

  function confirmDialog() {
    let dialog = document.getElementById("confirm-approve");
    if (dialog) return dialog;
    dialog = document.createElement("dialog");
    dialog.id = "confirm-approve";
    dialog.className = "help confirm";
    dialog.setAttribute("aria-labelledby", "confirm-title");
    dialog.setAttribute("aria-describedby", "confirm-text");
    const title = document.createElement("h2");
    title.id = "confirm-title";
    const text = document.createElement("p");
    text.id = "confirm-text";
    const actions = document.createElement("div");
    actions.className = "panel-actions";
    const yes = document.createElement("button");
    yes.type = "button";
    yes.className = "btn btn-approve";
    yes.dataset.confirmApprove = "";
    yes.textContent = "Approve";
    const no = document.createElement("button");
    no.type = "button";
    no.className = "btn";
    no.dataset.confirmCancel = "";
    no.textContent = "Cancel";
    actions.append(yes, no);
    dialog.append(title, text, actions);
    dialog.addEventListener("close", () => {
      const card = confirming && document.getElementById("card-" + confirming.id);
      const approved = confirming && confirming.approved;
      confirming = null;
      if (!card) return;
      const button = card.querySelector('[data-action="approve"]');
      if (approved && button && !button.disabled && button.form) button.form.requestSubmit(button);
      else select(card, true);
    });
    document.body.append(dialog);
    return dialog;
  }

  function askToConfirm(card, button) {
    const dialog = confirmDialog();
    const tool = card.querySelector(".tool");
    dialog.querySelector("#confirm-title").textContent = "Approve " + (tool ? tool.textContent : "this call") + "?";
    dialog.querySelector("#confirm-text").textContent = button.dataset.confirm;
    confirming = { id: card.dataset.id, approved: false };
    select(card, false);
    dialog.showModal();
    dialog.querySelector("[data-confirm-cancel]").focus();
  }

  function onConfirmClick(target) {
    const dialog = target.closest("#confirm-approve");
    if (!dialog) return false;
    if (target.closest("[data-confirm-approve]") && confirming) {
      confirming.approved = true;
      dialog.close();
    } else if (target.closest("[data-confirm-cancel]")) {
      dialog.close();
    }
    return true;
  }

  // ---- shortcuts -------------------------------------------------------------------------

  function clickAction(card, kind) {
    const button = card.querySelector('[data-action="' + kind + '"]');
    if (!button || button.disabled) return false;
    if (button.dataset.open) openPanel(card, kind, false);
    else button.click();
    return true;
  }

  function onKey(event) {
    const help = document.getElementById("help");
    if (document.querySelector("dialog[open]")) return; // a dialog takes its own keys (Esc closes it)
    if (event.key === "Escape") {
      const card = cardOf(event.target) || selectedCard();
      if (card && hasOpenPanel(card)) {
        closePanels(card);
        select(card, true);
        event.preventDefault();
      }
      return;
    }
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter" && isTyping(event.target)) {
      const form = event.target.closest("form");
      if (form) {
        event.preventDefault();
        form.requestSubmit();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
    const card = selectedCard();
    switch (event.key) {
      case "j":
        move(1);
        break;
      case "k":
        move(-1);
        break;
      case "?":
        if (help) help.showModal();
        break;
      case "a":
      case "e":
      case "r":
      case "x": {
        const kind = { a: "approve", e: "edit", r: "respond", x: "reject" }[event.key];
        if (!card || !clickAction(card, kind)) return;
        break;
      }
      case "o": {
        const link = card && card.querySelector('a[href^="/requests/"]');
        if (!link) return;
        window.location.assign(link.href);
        break;
      }
      default:
        return;
    }
    event.preventDefault();
  }

  // ---- required fields -------------------------------------------------------------------
  // The server refuses a blank required field too (and says so next to it); checking here
  // first saves a round trip and keeps what was typed in the other fields.

  function showFieldError(input, message) {
    const field = input.closest(".field");
    const error = field && field.querySelector(".field-error");
    if (!error) return;
    error.textContent = message || "";
    error.hidden = !message;
    field.classList.toggle("field-invalid", Boolean(message));
    const described = (input.getAttribute("aria-describedby") || "").split(" ").filter((id) => id && id !== error.id);
    if (message) {
      input.setAttribute("aria-invalid", "true");
      described.unshift(error.id);
    } else {
      input.removeAttribute("aria-invalid");
    }
    if (described.length) input.setAttribute("aria-describedby", described.join(" "));
    else input.removeAttribute("aria-describedby");
  }

  function blankRequired(form) {
    let first = null;
    form.querySelectorAll("[data-required]").forEach((input) => {
      const blank = input.value.trim() === "";
      showFieldError(input, blank ? input.dataset.required : null);
      if (blank && first === null) first = input;
    });
    return first;
  }

  function onSubmit(event) {
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    const blank = blankRequired(form);
    if (blank === null) return;
    event.preventDefault();
    event.stopImmediatePropagation(); // before htmx sends it
    blank.focus();
  }

  function onInput(event) {
    const input = event.target;
    if (input instanceof HTMLElement && input.hasAttribute("data-required") && input.value.trim() !== "") {
      showFieldError(input, null);
    }
  }

  // ---- clicks ----------------------------------------------------------------------------

  async function copy(input) {
    input.select();
    try {
      await navigator.clipboard.writeText(input.value);
      return true;
    } catch (error) {
      return document.execCommand && document.execCommand("copy");
    }
  }

  function onClick(event) {
    const target = event.target instanceof Element ? event.target : null;
    if (!target) return;
    if (onConfirmClick(target)) return;
    const card = cardOf(target);
    const approve = target.closest("[data-confirm]");
    if (approve && card && event.detail === 0) {
      // not a pointer's click: the keyboard's approve of a destructive call asks once more
      event.preventDefault();
      askToConfirm(card, approve);
      return;
    }
    if (card && card.closest("#pending, .cards")) select(card, false);
    const opener = target.closest("[data-open]");
    if (opener && card) {
      openPanel(card, opener.dataset.open, true);
      return;
    }
    if (target.closest("[data-close]") && card) {
      closePanels(card);
      select(card, true);
      return;
    }
    const copier = target.closest("[data-copy]");
    if (copier) {
      const input = document.querySelector(copier.dataset.copy);
      if (input) copy(input).then((done) => (copier.textContent = done ? "Copied" : "Select and copy"));
      return;
    }
    if (target.closest("[data-dismiss]")) {
      const flash = target.closest(".flash");
      if (flash) flash.remove();
    }
  }

  // ---- start -----------------------------------------------------------------------------

  function start() {
    document.addEventListener("keydown", onKey);
    document.addEventListener("click", onClick);
    document.addEventListener("submit", onSubmit, true);
    document.addEventListener("input", onInput);
    document.addEventListener("focusin", (event) => {
      if (event.target instanceof HTMLInputElement && event.target.hasAttribute("data-select-all")) event.target.select();
    });
    if (window.htmx) {
      window.htmx.onLoad((element) => {
        if (!(element instanceof Element) || element === document.body) return;
        const cards = element.matches(".card") ? [element] : Array.from(element.querySelectorAll(".card"));
        cards.forEach((card) => {
          const twin = Array.from(document.querySelectorAll("#" + CSS.escape(card.id))).find((other) => other !== card);
          if (twin) {
            card.remove(); // "load more" brought a card that arrived live already
            return;
          }
          if (card.dataset.id === selectedId) select(card, true);
          decided(card);
          settle(card);
        });
        if (cards.length) refreshCount();
      });
    }
    tick();
    window.setInterval(tick, 1000);
    if (document.body.hasAttribute("data-live") && pendingList() !== null) setLiveState("connecting", "connecting…");
    if (document.body.hasAttribute("data-live") && "EventSource" in window) connect();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
