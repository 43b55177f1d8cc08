// The catalog's one script: filter and sort the index as you type, copy renderings.
// Every page works without it (the search form submits; renderings can be selected).
(function () {
  "use strict";

  // --- the index: search, format and owner filters, sortable columns ---
  const table = document.getElementById("contracts");
  if (table) {
    const body = table.tBodies[0];
    const rows = Array.from(body.querySelectorAll("tr.contract"));
    const search = document.getElementById("search");
    const filters = Array.from(document.querySelectorAll("select[data-filter]"));
    const count = document.getElementById("count");
    const none = document.getElementById("no-match");

    const apply = function () {
      const needle = (search ? search.value : "").trim().toLowerCase();
      let shown = 0;
      for (const row of rows) {
        let hit = !needle || row.dataset.search.includes(needle);
        for (const select of filters) {
          if (select.value && row.dataset[select.dataset.filter] !== select.value) hit = false;
        }
        row.hidden = !hit;
        if (hit) shown += 1;
      }
      if (count) count.textContent = String(shown);
      if (none) none.hidden = shown !== 0 || rows.length === 0;
    };
    if (search) search.addEventListener("input", apply);
    for (const select of filters) select.addEventListener("change", apply);

    for (const button of table.querySelectorAll("button.sort")) {
      button.addEventListener("click", function () {
        const header = button.closest("th");
        const key = button.dataset.key;
        const numeric = button.dataset.type === "number";
        const ascending = header.getAttribute("aria-sort") !== "ascending";
        for (const th of table.querySelectorAll("th[aria-sort]")) th.removeAttribute("aria-sort");
        header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const value = function (row) {
          const raw = row.dataset[key] || "";
          return numeric ? Number(raw) : raw.toLowerCase();
        };
        rows.sort(function (a, b) {
          const x = value(a), y = value(b);
          const order = x < y ? -1 : x > y ? 1 : a.dataset.name.localeCompare(b.dataset.name);
          return ascending ? order : -order;
        });
        for (const row of rows) body.appendChild(row);
      });
    }
    apply();
  }

  // --- copy buttons ---
  const status = document.getElementById("copy-status");
  const copyText = function (text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) {
      const area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      document.body.appendChild(area);
      area.select();
      const ok = document.execCommand("copy");
      document.body.removeChild(area);
      if (ok) resolve(); else reject(new Error("copy refused"));
    });
  };
  for (const button of document.querySelectorAll("button.copy")) {
    button.addEventListener("click", function () {
      const target = document.getElementById(button.dataset.copy);
      if (!target) return;
      copyText(target.textContent).then(function () {
        button.textContent = "Copied";
        button.classList.add("done");
        if (status) status.textContent = "Copied to the clipboard";
        setTimeout(function () { button.textContent = "Copy"; button.classList.remove("done"); }, 1600);
      }, function () {
        const range = document.createRange();
        range.selectNodeContents(target);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        if (status) status.textContent = "Selected: press Ctrl+C to copy";
      });
    });
  }
})();
