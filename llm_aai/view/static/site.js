// llm-aai view: filters and sorting on the episodes page, turn navigation and the full-size
// image viewer on episode pages. No libraries; the pages work without it, only less handily.
"use strict";

function setUpEpisodeTable() {
  const table = document.getElementById("episodes");
  if (!table) return;
  const rows = Array.from(table.tBodies[0].rows);
  const selects = Array.from(document.querySelectorAll("[data-filter]"));
  const bounds = Array.from(document.querySelectorAll("[data-min], [data-max]"));
  const count = document.getElementById("count");
  function withinBounds(row) {
    return bounds.every((input) => {
      if (input.value === "") return true;
      const limit = parseFloat(input.value);
      const value = parseFloat(row.dataset[input.dataset.min ?? input.dataset.max]);
      return input.dataset.min !== undefined ? value >= limit : value <= limit;
    });
  }
  function applyFilters() {
    let shown = 0;
    for (const row of rows) {
      const keep = withinBounds(row) &&
        selects.every((s) => !s.value || row.dataset[s.dataset.filter] === s.value);
      row.hidden = !keep;
      if (keep) shown += 1;
    }
    count.textContent = `${shown} of ${rows.length} episodes`;
  }
  selects.forEach((s) => s.addEventListener("change", applyFilters));
  bounds.forEach((input) => input.addEventListener("input", applyFilters));
  const headers = Array.from(table.tHead.rows[0].cells);
  headers.forEach((header, column) => {
    header.addEventListener("click", () => {
      const ascending = header.getAttribute("aria-sort") !== "ascending";
      headers.forEach((h) => h.removeAttribute("aria-sort"));
      header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const numeric = header.dataset.sort === "number";
      const key = (row) => {
        const cell = row.cells[column];
        const text = cell.dataset.value ?? cell.textContent.trim();
        return numeric ? parseFloat(text) : text;
      };
      const sorted = rows.slice().sort((a, b) => {
        const x = key(a), y = key(b);
        const order = numeric ? x - y : String(x).localeCompare(String(y));
        return ascending ? order : -order;
      });
      sorted.forEach((row) => table.tBodies[0].appendChild(row));
    });
  });
  applyFilters();
}

function setUpTurns() {
  const turns = Array.from(document.querySelectorAll("article.turn"));
  if (!turns.length) return;
  let index = -1;
  function select(next) {
    index = Math.max(0, Math.min(turns.length - 1, next));
    const turn = turns[index];
    turns.forEach((t) => t.classList.toggle("current", t === turn));
    document.querySelectorAll("[data-turn]").forEach((mark) => {
      if (mark.tagName !== "ARTICLE") mark.classList.toggle("current", mark.dataset.turn === turn.dataset.turn);
    });
    turn.scrollIntoView({ block: "start" });
    history.replaceState(null, "", `#${turn.id}`);
  }
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (document.querySelector("dialog[open]")) return;
    if (event.key === "ArrowRight") { select(index + 1); event.preventDefault(); }
    if (event.key === "ArrowLeft") { select(index - 1); event.preventDefault(); }
  });
  const fromHash = turns.findIndex((t) => `#${t.id}` === location.hash);
  if (fromHash >= 0) select(fromHash);
  document.querySelectorAll(".turn-mark, .health-curve .turn-dot").forEach((mark) => {
    mark.addEventListener("click", () => {
      const at = turns.findIndex((t) => t.dataset.turn === mark.dataset.turn);
      if (at >= 0) select(at);
    });
  });
}

function setUpLightbox() {
  const dialog = document.getElementById("lightbox");
  if (!dialog || typeof dialog.showModal !== "function") return;
  const image = dialog.querySelector("img");
  document.querySelectorAll("a.thumb").forEach((link) => {
    link.addEventListener("click", (event) => {
      event.preventDefault();
      image.src = link.dataset.full;
      dialog.showModal();
    });
  });
  dialog.addEventListener("click", (event) => { if (event.target === dialog) dialog.close(); });
}

setUpEpisodeTable();
setUpTurns();
setUpLightbox();
