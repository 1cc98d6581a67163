"use strict";
// The page of `c4engine gui`. The server holds the game and the engine; this page
// shows what the server says (state, info lines, errors) and sends requests.
(() => {
  const WIDTH = 7, HEIGHT = 6, CELLS = WIDTH * HEIGHT;
  const SYMBOLS = ["", "✕", "◯"];
  const NAMES = ["", "first player (✕)", "second player (◯)"];
  const $ = (id) => document.getElementById(id);

  let ws = null;
  let state = null;
  let analysis = {};        // column -> {text, depth} for the state's version
  let thinking = "";        // the last line of the engine's own move search, in words
  let lastMoveWords = "";   // that line's score, kept for the move it chose
  const cells = [];         // cells[row][col], row 0 at the top

  // ---------------------------------------------------------------- building
  function build() {
    const board = $("board");
    for (let row = 0; row < HEIGHT; row++) {
      cells.push([]);
      for (let col = 1; col <= WIDTH; col++) {
        const cell = document.createElement("button");
        cell.type = "button";
        cell.className = "cell";
        cell.dataset.col = col;
        cell.dataset.row = HEIGHT - row;
        cell.dataset.owner = "0";
        cell.setAttribute("aria-label", `column ${col}`);
        cell.addEventListener("click", () => request({op: "move", column: col}));
        const stone = document.createElement("span");
        stone.className = "stone";
        cell.appendChild(stone);
        board.appendChild(cell);
        cells[row].push(cell);
      }
    }
    const scores = $("scores");
    for (let col = 1; col <= WIDTH; col++) {
      const s = document.createElement("div");
      s.className = "score";
      s.dataset.col = col;
      scores.appendChild(s);
    }
    $("undo").onclick = () => request({op: "undo"});
    $("redo").onclick = () => request({op: "redo"});
    $("new").onclick = () => request({op: "new"});
    $("hint-button").onclick = () => request({op: "hint"});
    $("restart").onclick = () => request({op: "restart"});
    $("setup").onclick = () => request({op: "set", text: $("setup-text").value});
    $("setup-text").addEventListener("keydown", (e) => { if (e.key === "Enter") $("setup").click(); });
    $("mode").onchange = () => request({op: "settings", mode: $("mode").value});
    $("level").oninput = () => { $("level-out").textContent = $("level").value; };
    $("level").onchange = () => request({op: "settings", level: Number($("level").value)});
    $("movetime").onchange = () => request({op: "settings", movetime: Number($("movetime").value)});
    $("analysis").onchange = () => request({op: "settings", analysis: $("analysis").checked});
    $("animate").checked = localStorage.getItem("c4-animate") !== "off";
    $("animate").onchange = () => localStorage.setItem("c4-animate", $("animate").checked ? "on" : "off");
    $("copy-digits").onclick = () => copy($("digits").textContent);
    $("copy-fen").onclick = () => copy($("fen").textContent);
    document.addEventListener("keydown", (e) => {
      const typing = ["INPUT", "SELECT", "TEXTAREA"].includes(document.activeElement.tagName)
        && document.activeElement.type !== "checkbox" && document.activeElement.type !== "range";
      if (!typing && !e.ctrlKey && !e.metaKey && !e.altKey && /^[1-7]$/.test(e.key)) {
        request({op: "move", column: Number(e.key)});
      }
    });
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(() => say(`copied: ${text}`), () => showError("could not copy"));
    } else {
      showError("the browser does not allow copying here: select the text instead");
    }
  }

  // ---------------------------------------------------------------- talking
  function connect() {
    ws = new WebSocket(`ws://${location.host}/ws`);
    ws.onopen = resume;
    ws.onmessage = (event) => receive(JSON.parse(event.data));
    ws.onclose = () => {
      say("Disconnected from the c4engine server: restart `c4engine gui` and reload the page.");
      document.body.classList.add("offline");
    };
  }

  // A reload opens a new session: the tab's last position and settings carry over.
  function resume() {
    const saved = JSON.parse(sessionStorage.getItem("c4-game") || "null");
    if (!saved) return;
    request({op: "settings", mode: saved.mode, level: saved.level, movetime: saved.movetime,
             analysis: saved.analysis});
    if (saved.position) request({op: "set", text: saved.position});
  }

  function remember(s) {
    sessionStorage.setItem("c4-game", JSON.stringify({
      position: s.digits !== null ? s.digits : s.fen, mode: s.mode, level: s.level,
      movetime: s.movetime, analysis: s.analysis}));
  }

  function request(message) {
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      showError("not connected to the c4engine server");
      return;
    }
    ws.send(JSON.stringify(message));
  }

  function receive(message) {
    if (message.type === "state") {
      if (!state || state.version !== message.version) {
        lastMoveWords = state && message.last_engine_move ? thinking : "";
        analysis = {};
        thinking = "";
        clearError();
      }
      const previous = state;
      state = message;
      render(previous);
      remember(state);
    } else if (message.type === "info") {
      info(message);
    } else if (message.type === "error") {
      showError(message.message);
    } else if (message.type === "engine_says" && message.text.startsWith("error")) {
      showError(`engine: ${message.text}`);
    }
  }

  // ---------------------------------------------------------------- info lines
  function emptyCells() {
    return state ? CELLS - state.board.flat().filter((v) => v !== 0).length : CELLS;
  }

  function scoreWords(score, depth) {
    if (!score) return "";
    if (score.kind === "mate") {
      const n = Math.abs(score.value), atMost = score.bound ? "≤" : "";
      return score.value > 0 ? `wins in ${atMost}${n}` : `loses in ${atMost}${n}`;
    }
    if (score.value === 0 && depth >= emptyCells()) return "draw";
    return (score.value > 0 ? "+" : "") + score.value;
  }

  // The server has read the line (score, depth, multipv, pv as columns 1-7).
  function info(message) {
    if (!state || message.version !== state.version) return;
    const words = scoreWords(message.score, message.depth);
    if (message.kind === "analysis") {
      const proven = (message.score.kind === "mate" && !message.score.bound) || words === "draw";
      analysis[message.pv[0]] = {text: words, depth: message.depth, proven};
      renderScores();
    } else if (message.kind === "move" && message.multipv === 1) {
      thinking = `${words} (depth ${message.depth})`;
      $("engine-line").textContent = `Engine thinking: ${thinking}`;
    }
  }

  // ---------------------------------------------------------------- drawing
  function render(previous) {
    const s = state;
    const grew = previous && previous.moves.length + 1 === s.moves.length
      && previous.moves.every((m, i) => m === s.moves[i]) && previous.fen !== s.fen;
    const last = s.moves.length ? lastCell(s) : null;
    const wins = new Set(s.winning_cells.map(([c, r]) => `${c},${r}`));
    for (let row = 0; row < HEIGHT; row++) {
      for (let col = 1; col <= WIDTH; col++) {
        const cell = cells[row][col - 1], owner = s.board[row][col - 1], rowFromBottom = HEIGHT - row;
        const stone = cell.firstChild;
        cell.dataset.owner = String(owner);
        stone.className = "stone" + (owner ? ` p${owner}` : "");
        stone.textContent = SYMBOLS[owner];
        cell.classList.toggle("win", wins.has(`${col},${rowFromBottom}`));
        cell.classList.toggle("last", !!last && last[0] === col && last[1] === rowFromBottom);
        cell.classList.toggle("hinted", s.hint === col);
        cell.setAttribute("aria-label", `column ${col}, row ${rowFromBottom}: ${owner ? NAMES[owner] : "empty"}`);
        if (grew && last && last[0] === col && last[1] === rowFromBottom && $("animate").checked) {
          stone.style.setProperty("--fall", String(row + 1));
          stone.classList.add("drop");
        }
      }
    }
    document.body.classList.toggle("no-animation", !$("animate").checked);
    $("status").textContent = statusText(s);
    renderBanner(s.engine);
    renderScores();
    const hint = $("hint");
    hint.hidden = s.hint === null && !s.hint_pending;
    hint.textContent = s.hint !== null ? `Hint: play column ${s.hint}` : "Hint: the engine is looking…";
    if (s.last_engine_move) {
      const m = s.last_engine_move;
      $("engine-line").textContent = `Engine played ${m.column} in ${(m.ms / 1000).toFixed(1)} s`
        + (lastMoveWords ? `: ${lastMoveWords}` : "");
    } else if (!s.thinking || s.thinking !== "move") {
      $("engine-line").textContent = "";
    }
    $("undo").disabled = !s.can_undo;
    $("redo").disabled = !s.can_redo;
    $("hint-button").disabled = s.result !== null || s.engine.status !== "ready";
    renderMoves(s);
    $("digits").textContent = s.digits === null ? "(set from a FEN)" : (s.digits || "(start)");
    $("copy-digits").disabled = s.digits === null;
    $("fen").textContent = s.fen;
    if (document.activeElement !== $("mode")) $("mode").value = s.mode;
    if (document.activeElement !== $("level")) { $("level").value = s.level; $("level-out").textContent = s.level; }
    if (document.activeElement !== $("movetime")) selectMovetime(s.movetime);
    $("analysis").checked = s.analysis;
    document.body.classList.toggle("analysing", s.analysis);
  }

  function selectMovetime(ms) {
    const select = $("movetime");
    if (![...select.options].some((o) => Number(o.value) === ms)) {
      const o = document.createElement("option");
      o.value = ms; o.textContent = `${ms / 1000} s`;
      select.appendChild(o);
    }
    select.value = String(ms);
  }

  function lastCell(s) {
    const col = s.moves[s.moves.length - 1];
    let height = 0;
    for (let row = 0; row < HEIGHT; row++) if (s.board[row][col - 1]) height++;
    return [col, height];
  }

  function statusText(s) {
    const who = (side) => side === "first" ? NAMES[1] : NAMES[2];
    const engineSide = s.mode === "first" ? "second" : s.mode === "second" ? "first" : null;
    if (s.result === "draw") return "Draw: the board is full.";
    if (s.result) {
      if (engineSide === null) return `The ${who(s.result)} wins.`;
      return s.result === engineSide ? "The engine wins." : "You win!";
    }
    if (s.engine.status === "starting") return "The engine is starting…";
    if (s.engine_turn) return s.engine.status === "ready" ? "The engine is thinking…" : "The engine's turn: restart it to go on.";
    if (engineSide === null) return `${who(s.to_move)[0].toUpperCase()}${who(s.to_move).slice(1)} to move.`;
    return `Your move (${who(s.to_move)}): click a column or press 1-7.`;
  }

  function renderBanner(engine) {
    const broken = engine.status === "dead" || engine.status === "hung";
    $("banner").hidden = !broken;
    if (broken) {
      const what = engine.status === "hung" ? "The engine stopped answering" : "The engine stopped";
      $("banner-text").textContent = `${what}: ${engine.detail}. The game is kept.`;
    }
  }

  function renderScores() {
    const s = state;
    for (const el of $("scores").children) {
      const col = Number(el.dataset.col);
      const a = analysis[col];
      el.textContent = !s.analysis ? "" : !s.playable.includes(col) ? "–" : a ? a.text : "…";
      el.classList.toggle("proven", !!a && a.proven);
      el.title = a ? `depth ${a.depth}` : "";
    }
  }

  function renderMoves(s) {
    const list = $("moves");
    list.innerHTML = "";
    const firstIsSecond = s.first_mover === "second";
    const plies = firstIsSecond ? [null, ...s.moves] : s.moves;
    for (let i = 0; i < plies.length; i += 2) {
      const li = document.createElement("li");
      const a = plies[i] === null ? "…" : `✕${plies[i]}`;
      const b = i + 1 < plies.length ? ` ◯${plies[i + 1]}` : "";
      li.textContent = `${i / 2 + 1}. ${a}${b}`;
      list.appendChild(li);
    }
  }

  // ---------------------------------------------------------------- messages
  let errorTimer = null;
  function showError(text) {
    const el = $("error");
    el.textContent = text;
    el.hidden = false;
    clearTimeout(errorTimer);
    errorTimer = setTimeout(clearError, 10000);
  }
  function clearError() { $("error").hidden = true; $("error").textContent = ""; }
  function say(text) { $("status").textContent = text; }

  build();
  connect();
})();
