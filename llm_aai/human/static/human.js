// The participant's pages: the instructions form, and the play page in either interface.
// The page keeps no state of its own: it shows the session's view as the server sends it,
// so a reload (or a second look after a lost connection) shows exactly where the level is.
"use strict";

const KEYS = ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight"];
const $ = (id) => document.getElementById(id);

function showError(text) {
  $("error").textContent = text || "";
}

async function send(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify(body),
    credentials: "same-origin",
  });
  let data = {};
  try { data = await response.json(); } catch (error) { data = {error: `HTTP ${response.status}`}; }
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

function setupIndex(main) {
  $("start-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    showError("");
    const button = document.querySelector("[data-testid=start]");
    button.disabled = true;
    try {
      const data = await send("/api/sessions", {
        participant: $("participant").value, interface: main.dataset.interface});
      window.location.assign(data.play);
    } catch (error) {
      showError(error.message);
      button.disabled = false;
    }
  });
}

// What every view shows, whatever the interface.
function renderText(main, view) {
  main.dataset.phase = view.phase;
  main.dataset.version = view.version;
  main.dataset.replies = view.replies;
  main.dataset.applied = view.applied;
  $("progress").textContent = `Level ${view.level} of ${view.levels}`;
  $("replies").textContent = view.max_scripts === null
    ? `Step ${view.replies}` : `Program ${view.replies} of ${view.max_scripts} sent`;
  $("feedback").textContent = view.preamble;
  $("health").textContent = view.text;
  let message = view.message;
  if (view.phase === "done") message += "\nAll levels are done. Thank you!";
  if (view.phase === "starting") message = "The level is being set up...";
  $("message").textContent = message;
  $("next").hidden = view.phase !== "level_over";
  // the keyboard's "press an arrow key to start" is for a level not yet begun
  const hint = $("hint");
  if (hint) hint.hidden = !(view.replies === 0 && ["starting", "playing"].includes(view.phase));
}

function setupScripts(main) {
  const form = $("script-form");
  const input = $("script");
  const submit = document.querySelector("[data-testid=submit-script]");
  let polling = null;

  function render(view) {
    renderText(main, view);
    const images = view.images;
    $("earlier").replaceChildren(...images.slice(0, -1).map((source) => {
      const image = document.createElement("img");
      image.src = source;
      image.alt = "an earlier picture of this message";
      return image;
    }));
    if (images.length) $("observation").src = images[images.length - 1];
    const yourTurn = view.phase === "your_turn";
    input.disabled = !yourTurn;
    submit.disabled = !yourTurn;
    if (yourTurn) input.focus();
    clearTimeout(polling);
    if (view.phase === "starting" || view.phase === "playing") {
      polling = setTimeout(refresh, 300);
    }
  }

  async function refresh() {
    try {
      const response = await fetch("/api/state", {credentials: "same-origin"});
      const data = await response.json();
      if (!response.ok) throw new Error(data.error);
      render(data);
    } catch (error) {
      showError(`${error.message}; retrying`);
      polling = setTimeout(refresh, 1000);
    }
  }

  // Tell the server the page is open even while the participant thinks: a session no page
  // asks for is abandoned after a while and may be taken over.
  setInterval(async () => {
    try {
      const response = await fetch("/api/state", {credentials: "same-origin"});
      const data = await response.json();
      if (!response.ok) { showError(data.error); return; }
      if (String(data.version) !== main.dataset.version) render(data);
    } catch (error) { /* the next beat tries again */ }
  }, Number(main.dataset.heartbeatMs));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    showError("");
    input.disabled = true;
    submit.disabled = true;
    try {
      render(await send("/api/script", {script: input.value}));
      input.value = "";
    } catch (error) {
      showError(error.message);
      refresh();
    }
  });
  $("next").addEventListener("click", async () => {
    showError("");
    $("next").hidden = true;
    try { render(await send("/api/next", {})); } catch (error) { showError(error.message); }
  });
  refresh();
}

function setupKeys(main) {
  const held = new Set();
  let sequence = 0;
  let socket = null;
  let view = null;
  let frameUrl = null;

  function sendKeys() {
    sequence += 1;
    main.dataset.sent = sequence;
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify({held: [...held], seq: sequence}));
    }
  }

  function connect() {
    const scheme = window.location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${window.location.host}/ws/keys`);
    socket.binaryType = "blob";
    socket.onmessage = (event) => {
      if (typeof event.data !== "string") {
        if (frameUrl) URL.revokeObjectURL(frameUrl);
        frameUrl = URL.createObjectURL(event.data);
        $("observation").src = frameUrl;
        return;
      }
      const data = JSON.parse(event.data);
      if (data.type === "warning") { showError(data.message); return; }
      view = data;
      renderText(main, view);
    };
    socket.onopen = () => { showError(""); };
    socket.onclose = () => {
      if (view && (view.phase === "done" || view.phase === "stopped")) return;
      showError("The connection was lost; reconnecting...");
      setTimeout(connect, 1000);
    };
  }

  window.addEventListener("keydown", (event) => {
    if (!KEYS.includes(event.key)) return;
    event.preventDefault();
    if (held.has(event.key)) return;  // the keyboard's own repeat adds nothing
    held.add(event.key);
    sendKeys();
  });
  window.addEventListener("keyup", (event) => {
    if (!KEYS.includes(event.key)) return;
    event.preventDefault();
    held.delete(event.key);
    sendKeys();
  });
  window.addEventListener("blur", () => { held.clear(); sendKeys(); });
  $("next").addEventListener("click", async () => {
    showError("");
    $("next").hidden = true;
    try { await send("/api/next", {}); } catch (error) { showError(error.message); }
    $("next").blur();
  });
  connect();
}

document.addEventListener("DOMContentLoaded", () => {
  const main = document.querySelector("main");
  if (main.dataset.page === "index") setupIndex(main);
  else if (main.dataset.interface === "keys") setupKeys(main);
  else setupScripts(main);
});
