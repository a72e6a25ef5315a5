// signoff inbox: ticking cards to decide them together (the bar's form, #batch).
// The checkboxes belong to the form (form="batch"), so without this file the bar still works;
// this adds the count on its buttons, shift-click ranges, the `s` / Shift+S keys, keeps what was
// ticked when a card is re-rendered by a live update, and, as for one card, asks once more when
// the keyboard approves a selection holding a destructive call.
(function () {
  "use strict";

  const ticked = new Set();
  let anchorId = null;

  const bar = () => document.getElementById("batch");
  const boxes = () => Array.from(document.querySelectorAll("#pending .batch-pick"));
  const boxOf = (card) => (card ? card.querySelector(".batch-pick") : null);

  function isTyping(target) {
    if (target instanceof HTMLInputElement && target.type === "checkbox") return false;
    return (
      target instanceof HTMLElement &&
      (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))
    );
  }

  function refresh() {
    const form = bar();
    if (!form) return;
    const present = new Set(boxes().map((box) => box.value));
    Array.from(ticked).forEach((id) => {
      if (!present.has(id)) ticked.delete(id); // decided, or no longer open for you
    });
    boxes().forEach((box) => {
      box.checked = ticked.has(box.value);
      const card = box.closest(".card");
      if (card) card.classList.toggle("ticked", box.checked);
    });
    const count = ticked.size;
    form.hidden = count === 0 && !form.contains(document.activeElement);
    const label = document.getElementById("batch-count");
    if (label) label.textContent = count === 1 ? "1 request selected" : count + " requests selected";
    form.querySelectorAll("[data-batch]").forEach((button) => {
      const verb = button.dataset.batch === "approve" ? "Approve " : "Reject ";
      button.textContent = verb + count;
      button.disabled = count === 0;
    });
  }

  function setTicked(box, on) {
    if (on) ticked.add(box.value);
    else ticked.delete(box.value);
  }

  function tickRange(toBox, on) {
    const all = boxes();
    const from = all.findIndex((box) => box.value === anchorId);
    const to = all.indexOf(toBox);
    if (from < 0 || to < 0) {
      setTicked(toBox, on);
      return;
    }
    all.slice(Math.min(from, to), Math.max(from, to) + 1).forEach((box) => setTicked(box, on));
  }

  // ---- a keyboard approval of destructive calls asks once more (as inbox.js does for one card) --

  function destructiveTicked() {
    return boxes().filter((box) => {
      const card = box.closest(".card");
      return ticked.has(box.value) && card && card.querySelector('[data-action="approve"][data-confirm]');
    }).length;
  }

  function confirmDialog() {
    let dialog = document.getElementById("confirm-batch");
    if (dialog) return dialog;
    dialog = document.createElement("dialog");
    dialog.id = "confirm-batch";
    dialog.className = "help confirm";
    dialog.setAttribute("aria-labelledby", "confirm-batch-title");
    dialog.setAttribute("aria-describedby", "confirm-batch-text");
    const title = document.createElement("h2");
    title.id = "confirm-batch-title";
    const text = document.createElement("p");
    text.id = "confirm-batch-text";
    const actions = document.createElement("div");
    actions.className = "panel-actions";
    const yes = document.createElement("button");
    yes.type = "button";
    yes.className = "btn btn-approve";
    yes.textContent = "Approve";
    const no = document.createElement("button");
    no.type = "button";
    no.className = "btn";
    no.textContent = "Cancel";
    yes.addEventListener("click", () => {
      dialog.dataset.approved = "yes";
      dialog.close();
    });
    no.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => {
      const approve = bar() && bar().querySelector('[data-batch="approve"]');
      const approved = dialog.dataset.approved === "yes";
      delete dialog.dataset.approved;
      if (approved && approve && !approve.disabled) bar().requestSubmit(approve);
      else if (approve) approve.focus();
    });
    actions.append(yes, no);
    dialog.append(title, text, actions);
    document.body.append(dialog);
    return dialog;
  }

  function askToConfirm(destructive) {
    const dialog = confirmDialog();
    const count = ticked.size;
    dialog.querySelector("h2").textContent = "Approve " + count + (count === 1 ? " request?" : " requests?");
    dialog.querySelector("p").textContent =
      (destructive === 1 ? "1 of them is" : destructive + " of them are") +
      " marked destructive: it runs as soon as you approve.";
    dialog.showModal();
    dialog.querySelector(".btn:not(.btn-approve)").focus();
  }

  function onClick(event) {
    const approve = event.target instanceof Element ? event.target.closest('#batch [data-batch="approve"]') : null;
    if (approve && event.detail === 0) {
      const destructive = destructiveTicked();
      if (destructive > 0) {
        // not a pointer's click: the keyboard's approval of a destructive call asks once more
        event.preventDefault();
        askToConfirm(destructive);
        return;
      }
    }
    const box = event.target instanceof Element ? event.target.closest(".batch-pick") : null;
    if (!box) return;
    if (event.shiftKey && anchorId !== null) tickRange(box, box.checked);
    else setTicked(box, box.checked);
    anchorId = box.value;
    refresh();
  }

  function onKey(event) {
    if (event.key !== "s" && event.key !== "S") return;
    if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
    if (document.querySelector("dialog[open]") || !bar()) return;
    const box = boxOf(document.querySelector("#pending .card.selected"));
    if (!box) return;
    if (event.shiftKey && anchorId !== null) tickRange(box, true);
    else setTicked(box, !ticked.has(box.value));
    anchorId = box.value;
    event.preventDefault();
    refresh();
  }

  function onSent(event) {
    // the bar's answer arrived: what it decided leaves the selection (the cards follow live)
    if (!(event.target instanceof Element) || event.target.id !== "batch") return;
    const ok = event.detail && event.detail.successful;
    if (!ok) return;
    ticked.clear();
    const reason = bar().querySelector('input[name="reason"]');
    if (reason) reason.value = "";
    refresh();
  }

  function start() {
    const form = bar();
    if (!form) return;
    boxes().forEach((box) => setTicked(box, box.checked)); // ticked before this ran (or kept by the browser)
    document.addEventListener("click", onClick);
    document.addEventListener("keydown", onKey);
    document.body.addEventListener("htmx:afterRequest", onSent);
    const list = document.getElementById("pending");
    if (list) new MutationObserver(refresh).observe(list, { childList: true, subtree: true });
    form.addEventListener("focusout", () => window.setTimeout(refresh, 0));
    refresh();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
