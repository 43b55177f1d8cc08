// Filter the contract list as you type (the form still works without script).
(function () {
  const input = document.getElementById("search");
  const rows = Array.from(document.querySelectorAll("#contracts tr.contract"));
  const count = document.getElementById("count");
  if (!input || !rows.length) return;
  input.addEventListener("input", function () {
    const needle = input.value.trim().toLowerCase();
    let shown = 0;
    for (const row of rows) {
      const hit = !needle || row.dataset.search.includes(needle);
      row.hidden = !hit;
      if (hit) shown += 1;
    }
    count.textContent = String(shown);
  });
})();
