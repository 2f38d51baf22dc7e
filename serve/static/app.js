"use strict";
// relore's page for people. It calls the same /api/v1 routes the client does and puts every
// byte it gets back on the page as a text node: nothing here parses markup from data.
(function () {
  const VERSION = document.querySelector('meta[name="relore-version"]').content;
  const TOKEN_KEY = "relore.token";
  const SIGNALS = ["file", "error", "test", "symbol"];
  const FILTERS = ["repo", "org", ...SIGNALS, "author", "kind", "trust", "state", "since"];
  const THREAD_KEYS = ["repo", "number", "mode", "focus", "after", "comment"];
  const PRECEDENT_KEYS = ["q", "repo", "file", "limit"];
  const GRADES = [
    [2, "answers it"],
    [1, "partly"],
    [0, "not relevant"],
  ];
  const $ = (id) => document.getElementById(id);

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  // --- building the page: text nodes only -------------------------------------------------

  function safeHref(url) {
    try {
      const parsed = new URL(String(url), location.href);
      if (parsed.protocol === "https:" || parsed.protocol === "http:") return parsed.href;
    } catch (err) {
      // not a URL: fall through
    }
    return "#";
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "href") node.setAttribute("href", safeHref(value));
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child); // a string becomes a text node: never parsed as markup
    }
    return node;
  }

  // A retrieved value inside one of our lines: a <bdi> isolates it, so right-to-left text in
  // a title or a login can never reorder the words around it (the daemon has already made
  // every bidi control visible).
  function retrieved(text, cls) {
    return el("bdi", { class: cls ? `retrieved ${cls}` : "retrieved" }, text || "");
  }

  function clear(...nodes) {
    for (const node of nodes) node.replaceChildren();
  }

  function say(id, text, isError) {
    const node = $(id);
    node.textContent = text || "";
    node.classList.toggle("error", Boolean(isError));
  }

  // --- what a page says besides its counts: the daemon's notices, shown verbatim -------------
  // The daemon words every notice (serve/notices.py) and says where it goes: "title"/"count"
  // in parentheses after the thread's line / the count's line, "before"/"after" a line of its
  // own before/after the items. This page words none of its own, so it can never say less
  // than `relore` prints for the same page.

  function noticesAt(page, place) {
    return (page.notices || []).filter((notice) => notice.place === place);
  }

  function noticeSpans(page, place) {
    return noticesAt(page, place).map((notice) =>
      el("span", { class: "notice", "data-kind": notice.kind }, ` (${notice.text})`),
    );
  }

  function noticeLines(page, place) {
    return noticesAt(page, place).map((notice) =>
      el("p", { class: "notice", "data-kind": notice.kind }, notice.text),
    );
  }

  // a summary line: our count, then the notices that qualify it
  function counted(id, text, page) {
    const node = $(id);
    node.replaceChildren(text, ...noticeSpans(page, "count"));
    node.classList.remove("error");
  }

  // --- talking to the daemon ----------------------------------------------------------------

  function token() {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  }

  async function explain(response) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const body = await response.json();
      if (body && typeof body.error === "string") message = body.error;
    } catch (err) {
      // not JSON: keep the status line
    }
    if (response.status === 401) {
      return `${message} — paste a token above (it is kept in this tab only)`;
    }
    if (response.status === 426) {
      const daemon = response.headers.get("x-relore-version") || "another version";
      return `this page came from relore ${VERSION} and the daemon now runs ${daemon}: reload the page`;
    }
    return message;
  }

  async function api(path, params, options = {}) {
    const url = new URL(`api/v1/${path}`, document.baseURI);
    for (const [name, value] of Object.entries(params || {})) {
      for (const item of [].concat(value)) {
        if (item !== null && item !== undefined && item !== "") url.searchParams.append(name, item);
      }
    }
    const headers = {
      "x-relore-client": VERSION,
      accept: options.text ? "text/plain" : "application/json",
    };
    if (token()) headers.authorization = `Bearer ${token()}`;
    const init = { method: options.method || "GET", headers, cache: "no-store", credentials: "omit" };
    if (options.body !== undefined) {
      headers["content-type"] = "application/json";
      init.body = JSON.stringify(options.body);
    }
    let response;
    try {
      response = await fetch(url, init);
    } catch (err) {
      throw new ApiError(0, "the daemon did not answer: is `relored serve` still running?");
    }
    if (!response.ok) throw new ApiError(response.status, await explain(response));
    return options.text ? response.text() : response.json();
  }

  // --- the token --------------------------------------------------------------------------------

  function showTokenState() {
    $("token").value = "";
    $("token-state").textContent = token() ? "a token is kept for this tab" : "no token";
  }

  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const value = $("token").value.trim();
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    showTokenState();
    loadIndex();
    route();
  });

  $("token-forget").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    showTokenState();
  });

  // --- views and the address bar ----------------------------------------------------------------

  function show(view) {
    $("search-view").hidden = view !== "search";
    $("thread-view").hidden = view !== "thread";
  }

  function hashFor(view, params) {
    const clean = {};
    for (const [name, value] of Object.entries(params)) {
      if (value !== null && value !== undefined && value !== "") clean[name] = value;
    }
    return `#/${view}?${new URLSearchParams(clean).toString()}`;
  }

  function go(view, params) {
    const hash = hashFor(view, params);
    if (location.hash === hash) route();
    else location.hash = hash;
  }

  function route() {
    const match = location.hash.match(/^#\/(search|thread|precedent)\?([\s\S]*)$/);
    if (!match) {
      show("search");
      return;
    }
    const given = new URLSearchParams(match[2]);
    const keys = { search: ["q", ...FILTERS], precedent: PRECEDENT_KEYS }[match[1]] || THREAD_KEYS;
    const params = {};
    for (const name of keys) if (given.get(name)) params[name] = given.get(name);
    if (match[1] === "search") {
      $("back").setAttribute("href", location.hash); // a thread's "← search" returns here
      fillSearchForm(params);
      show("search");
      runSearch(params);
    } else if (match[1] === "precedent") {
      $("back").setAttribute("href", location.hash);
      fillSearchForm(params);
      show("search");
      runPrecedent(params);
    } else {
      show("thread");
      openThread(params);
    }
  }

  // --- the shell line an agent would have run --------------------------------------------------

  function shellQuote(value) {
    const text = String(value);
    return /^[A-Za-z0-9_./:#@=-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
  }

  function searchCommand(params) {
    const words = ["relore", "search"];
    if (params.q) words.push(shellQuote(params.q));
    for (const name of FILTERS) if (params[name]) words.push(`--${name}`, shellQuote(params[name]));
    return words.join(" ");
  }

  function threadCommand(params) {
    const words = ["relore", "thread", `${params.repo}#${params.number}`];
    const flag = { outline: "--outline", full: "--full", files: "--files" }[params.mode];
    if (flag) words.push(flag);
    if (params.mode === "comment") words.push("--comment", shellQuote(params.comment));
    if (params.after) words.push("--after", shellQuote(params.after));
    if (params.focus) words.push("--focus", shellQuote(params.focus));
    return words.join(" ");
  }

  // --- search -----------------------------------------------------------------------------------

  let searchSeq = 0;

  function searchParams() {
    const data = new FormData($("search-form"));
    const params = {};
    for (const name of ["q", ...FILTERS]) {
      const value = String(data.get(name) || "");
      if (value.trim()) params[name] = name === "q" ? value : value.trim();
    }
    return params;
  }

  function fillSearchForm(params) {
    const form = $("search-form");
    for (const name of ["q", ...FILTERS]) {
      const field = form.elements.namedItem(name);
      if (field) field.value = params[name] || "";
    }
  }

  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    go("search", searchParams());
  });

  // Enter in the query box is a new line (tracebacks); Ctrl/Cmd+Enter searches
  $("q").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      $("search-form").requestSubmit();
    }
  });

  function filterWords(params) {
    return FILTERS.filter((name) => params[name]).map((name) => `${name}=${params[name]}`);
  }

  async function runSearch(params) {
    const seq = ++searchSeq;
    clear($("hits"), $("search-summary"), $("search-after"));
    $("search-model").hidden = true;
    say("search-message", "searching…");
    let page;
    try {
      page = await api("search", params);
    } catch (err) {
      if (seq === searchSeq) say("search-message", err.message, true);
      return;
    }
    if (seq !== searchSeq) return;
    say("search-message", "");
    renderSearch(page, params);
  }

  function renderSearch(page, params) {
    const summary = $("search-summary");
    const counted = page.counted ? ` ${page.counted}` : "";
    const more = page.total_is_lower_bound ? "+" : "";
    summary.append(el("p", {}, `${page.returned} of ${page.total}${more}${counted}`, noticeSpans(page, "count")));
    summary.append(...noticeLines(page, "before"));
    const list = $("hits");
    // the daemon says whether it records labels: no buttons that can only fail
    page.hits.forEach((hit) => list.append(hitNode(hit, params, page.labelling === true)));
    $("search-after").append(...noticeLines(page, "after"));
  }

  function trustNode(trust) {
    return el("span", { class: `trust trust-${trust || "unknown"}` }, `[${trust || "?"}]`);
  }

  function hitNode(hit, params, labelling) {
    const open = el(
      "a",
      { class: "hit-open", href: hashFor("thread", { repo: hit.repo, number: hit.number }) },
      `${hit.repo}#${hit.number}`,
    );
    return el(
      "li",
      { class: "hit", "data-document-id": hit.document_id, "data-number": hit.number },
      el("div", { class: "hit-head" }, open, ` ${hit.kind} ${hit.state} — `, retrieved(hit.title, "title")),
      el(
        "div",
        { class: "meta" },
        `${hit.document_kind} by `,
        retrieved(hit.author),
        " ",
        trustNode(hit.trust),
        ` ${hit.age} (${hit.date}) `,
        el("a", { href: hit.url, rel: "noopener noreferrer", target: "_blank" }, "on GitHub"),
        hit.partial ? ` (${hit.partial})` : null,
        hit.meaning ? ` (${hit.meaning})` : null,
      ),
      el("pre", { class: "snippet" }, hit.snippet || ""),
      labelling ? labelNode(hit, params) : null,
    );
  }

  function labelQuery(params) {
    const text = (params.q || "").trim();
    return text || filterWords(params).join(" ");
  }

  function labelNode(hit, params) {
    const status = el("span", { class: "label-status", role: "status" });
    const buttons = GRADES.map(([grade, words]) => {
      const button = el("button", { type: "button", class: `label label-${grade}` }, words);
      button.addEventListener("click", async () => {
        status.textContent = "recording…";
        status.classList.remove("error");
        try {
          await api("label", null, {
            method: "POST",
            body: {
              query: labelQuery(params),
              repo: hit.repo,
              document_id: hit.document_id,
              url: hit.url,
              grade,
            },
          });
          status.textContent = `recorded: ${words}`;
        } catch (err) {
          status.textContent = err.message;
          status.classList.add("error");
        }
      });
      return button;
    });
    return el("div", { class: "labels" }, "relevance: ", buttons, " ", status);
  }

  $("search-as-model").addEventListener("click", async () => {
    const params = searchParams();
    $("search-model").hidden = false;
    $("search-model-command").textContent = searchCommand(params);
    $("search-model-text").textContent = "…";
    try {
      $("search-model-text").textContent = await api("search", { ...params, format: "text" }, { text: true });
    } catch (err) {
      $("search-model-text").textContent = "";
      say("search-message", err.message, true);
    }
  });

  // --- precedent: earlier pull requests of the same kind --------------------------------------

  $("precedent-submit").addEventListener("click", () => {
    const params = searchParams();
    go("precedent", { q: params.q, repo: params.repo, file: params.file });
  });

  async function runPrecedent(params) {
    const seq = ++searchSeq;
    clear($("hits"), $("search-summary"), $("search-after"));
    $("search-model").hidden = true;
    say("search-message", "finding precedent…");
    let page;
    try {
      page = await api("precedent", params);
    } catch (err) {
      if (seq === searchSeq) say("search-message", err.message, true);
      return;
    }
    if (seq !== searchSeq) return;
    say("search-message", "");
    const more = page.total_is_lower_bound ? "+" : "";
    const counts = `${page.returned} of ${page.total}${more} ${page.counted} (${page.merged} merged; ${page.order})`;
    $("search-summary").append(el("p", {}, counts, noticeSpans(page, "count")), ...noticeLines(page, "before"));
    page.hits.forEach((hit) => $("hits").append(precedentNode(hit)));
    $("search-after").append(...noticeLines(page, "after"));
  }

  function precedentNode(hit) {
    const open = el(
      "a",
      { class: "hit-open", href: hashFor("thread", { repo: hit.repo, number: hit.number }) },
      `${hit.repo}#${hit.number}`,
    );
    const why = hit.why || {};
    const files = hit.files.paths.map((f) =>
      el("li", {}, `${f.change || "?"} `, retrieved(f.path), f.named ? " (named)" : null),
    );
    const reviews = hit.reviews.comments.map((c) =>
      el(
        "li",
        {},
        el("div", { class: "meta" }, `${c.kind} `, c.path ? ["on ", retrieved(c.path), `:${c.line || "?"} `] : null,
          "by ", retrieved(c.author), " ", trustNode(c.trust), ` ${c.date}`),
        el("pre", { class: "snippet" }, c.text || ""),
      ),
    );
    return el(
      "li",
      { class: "hit", "data-number": hit.number },
      el("div", { class: "hit-head" }, open, ` pr ${hit.merged ? "merged" : "closed without merging"} — `, retrieved(hit.title, "title")),
      el(
        "div",
        { class: "meta" },
        "by ",
        retrieved(hit.author),
        " ",
        trustNode(hit.trust),
        ` ${hit.age} (${hit.date}) `,
        el("a", { href: hit.url, rel: "noopener noreferrer", target: "_blank" }, "on GitHub"),
      ),
      el("div", { class: "meta" }, `matched: ${hit.matched}`, why.terms && why.terms.length ? [" — terms ", retrieved(why.terms.join(" "))] : null),
      el("pre", { class: "snippet" }, hit.snippet || ""),
      el("div", { class: "meta" }, `files: ${hit.files.returned} of ${hit.files.total} changed`),
      el("ul", {}, files),
      el("div", { class: "meta" }, `review comments: ${hit.reviews.returned} of ${hit.reviews.total}`),
      el("ul", {}, reviews),
    );
  }

  // --- one thread -------------------------------------------------------------------------------

  let current = null; // {params, nextAfter, firstId, shown, after: the "after" notices shown}
  let threadSeq = 0;

  function threadHead(head, page) {
    const by = head.author ? [retrieved(head.author), " ", trustNode(head.trust)] : ["?"];
    return el(
      "div",
      {},
      el(
        "h2",
        {},
        `${head.repo}#${head.number} ${head.kind} ${head.state} — `,
        retrieved(head.title, "title"),
        noticeSpans(page, "title"),
      ),
      el(
        "p",
        { class: "meta" },
        "opened by ",
        by,
        ` ${head.age} (${head.date}) `,
        el("a", { href: head.url, rel: "noopener noreferrer", target: "_blank" }, "on GitHub"),
      ),
    );
  }

  function commentNode(comment) {
    const where = comment.path ? [" on ", retrieved(comment.path), `:${comment.line || "?"}`] : [];
    const text = el("pre", { class: "comment-text" }, comment.text || "");
    const node = el(
      "article",
      { class: "comment", "data-comment-id": comment.id },
      el(
        "div",
        { class: "meta" },
        `[${comment.id}] ${comment.kind}`,
        where,
        " by ",
        retrieved(comment.author),
        " ",
        trustNode(comment.trust),
        ` ${comment.age} (${comment.date})`,
      ),
      text,
    );
    if (comment.body_chars) {
      const whole = el("button", { type: "button", class: "whole" }, `whole comment (${comment.body_chars} chars)`);
      whole.addEventListener("click", async () => {
        try {
          const page = await api("thread", { ...threadKey(), mode: "comment", comment: comment.id });
          if (page.comments && page.comments.length) text.textContent = page.comments[0].text || "";
          whole.remove();
        } catch (err) {
          say("thread-message", err.message, true);
        }
      });
      node.append(whole);
    }
    return node;
  }

  function threadKey() {
    return { repo: current.params.repo, number: current.params.number };
  }

  $("thread-form").addEventListener("submit", (event) => {
    event.preventDefault();
    go("thread", { ...threadKey(), focus: $("thread-focus").value.trim() });
  });

  for (const button of document.querySelectorAll("#thread-form button[data-mode]")) {
    if (button.type === "submit") continue;
    button.addEventListener("click", () => {
      go("thread", { ...threadKey(), mode: button.dataset.mode, focus: $("thread-focus").value.trim() });
    });
  }

  async function openThread(params) {
    const seq = ++threadSeq;
    current = { params, nextAfter: null, firstId: null, after: [] };
    $("thread-focus").value = params.focus || "";
    $("thread-model").hidden = true;
    $("load-more").hidden = true;
    $("read-in-order").hidden = true;
    clear($("thread-head"), $("thread-inflight"), $("thread-body"));
    say("thread-summary", "");
    say("thread-message", "loading…");
    let page;
    try {
      page = await api("thread", { ...params, mode: params.mode || "page" });
    } catch (err) {
      if (seq !== threadSeq) return;
      say("thread-message", err.message, true);
      // a thread the index never fetched may still be claimed by a pull request it holds
      if (err.status === 404) loadInflight(seq);
      return;
    }
    if (seq !== threadSeq) return;
    say("thread-message", "");
    $("thread-head").append(threadHead(page.thread, page));
    if (page.thread.kind === "issue") loadInflight(seq);
    const body = $("thread-body");
    if (page.mode === "full") {
      counted("thread-summary", `opening post, ${page.body_chars} chars:`, page);
      body.append(...noticeLines(page, "before"));
      body.append(el("pre", { class: "comment-text" }, page.opening_post || ">"));
    } else if (page.mode === "files") {
      counted("thread-summary", `changed files: ${page.returned} of ${page.total} listed`, page);
      body.append(...noticeLines(page, "before"));
      body.append(el("ul", { class: "files" }, page.files.map((f) => el("li", {}, `${f.change || "?"} `, retrieved(f.path)))));
    } else if (page.mode === "outline") {
      renderOutline(page);
    } else {
      renderComments(page);
      return; // its "after" notices move as the page reads on
    }
    body.append(...noticeLines(page, "after"));
  }

  // Open and merged pull requests that claim to close the issue (`relore inflight`).
  async function loadInflight(seq) {
    let page;
    try {
      page = await api("inflight", threadKey());
    } catch (err) {
      if (seq === threadSeq && err.status !== 404) say("thread-message", err.message, true);
      return;
    }
    if (seq !== threadSeq) return;
    const box = $("thread-inflight");
    if (noticesAt(page, "title").length) {
      box.append(el("p", {}, `${page.thread.repo}#${page.thread.number}`, noticeSpans(page, "title")));
    }
    const shown = page.total !== page.returned ? `${page.returned} of ${page.total}` : `${page.returned}`;
    box.append(
      el("p", { class: "meta" }, `pull requests claiming to close it: ${shown}`, noticeSpans(page, "count")),
    );
    box.append(...noticeLines(page, "before"));
    const claims = {
      open: "open: someone is on it",
      merged: "merged",
      abandoned: "abandoned: closed without merging (tried before; read why)",
    };
    for (const claim of Object.keys(claims)) {
      const pulls = page.pulls.filter((pr) => pr.claim === claim);
      if (!pulls.length) continue;
      box.append(el("p", { class: "meta" }, `${claims[claim]} (${page.claims[claim]}):`));
      box.append(
        el(
          "ul",
          { class: "pulls" },
          pulls.map((pr) =>
            el(
              "li",
              { "data-number": pr.number, "data-claim": claim },
              el("a", { href: hashFor("thread", { repo: pr.repo, number: pr.number }) }, `${pr.repo}#${pr.number}`),
              ` ${pr.state}, opened by `,
              retrieved(pr.author),
              " ",
              trustNode(pr.trust),
              `, updated ${pr.age} (${pr.date}) — `,
              retrieved(pr.title, "title"),
            ),
          ),
        ),
      );
    }
    box.append(...noticeLines(page, "after"));
  }

  function renderOutline(page) {
    counted("thread-summary", `outline: ${page.returned} of ${page.total} comments`, page);
    const list = el("ol", { class: "outline" });
    for (const row of page.outline) {
      const open = el("button", { type: "button", class: "outline-open" }, "read");
      const item = el(
        "li",
        { "data-comment-id": row.id },
        el("span", { class: "meta" }, `[${row.id}] `, retrieved(row.author), " ", trustNode(row.trust), ` ${row.date} `),
        retrieved(row.line, "outline-line"),
        " ",
        open,
      );
      open.addEventListener("click", async () => {
        try {
          const one = await api("thread", { ...threadKey(), mode: "comment", comment: row.id });
          (one.comments || []).forEach((c) => item.append(commentNode(c)));
          open.remove();
        } catch (err) {
          say("thread-message", err.message, true);
        }
      });
      list.append(item);
    }
    $("thread-body").append(...noticeLines(page, "before"), list);
  }

  // the count of a comments page, as many as are shown so far (reading on adds to them)
  function commentsSummary(page, shown) {
    counted("thread-summary", `comments: ${shown} of ${page.total} (${page.selection || ""})`, page);
  }

  // a comments page's "after" notices (what is missing, how to read on) stay after the last
  // comment shown: reading on replaces them with the next page's
  function afterNotices(page) {
    for (const node of current.after) node.remove();
    current.after = noticeLines(page, "after");
    $("thread-body").append(...current.after);
  }

  function renderComments(page) {
    const body = $("thread-body");
    if ("opening_post" in page) {
      // a thread's first page leads with what the thread is
      const whole = page.opening_post_chars;
      const head = whole ? `opening post (cut from ${whole.toLocaleString("en-US")} chars; whole with “full”):` : "opening post:";
      body.append(page.opening_post
        ? el("div", { class: "opening-post" }, el("p", { class: "meta" }, head), el("pre", { class: "comment-text" }, page.opening_post))
        : el("div", { class: "opening-post" }, el("p", { class: "meta" }, "opening post: (no text)")));
    }
    body.append(...noticeLines(page, "before"));
    (page.comments || []).forEach((c) => body.append(commentNode(c)));
    current.shown = (page.comments || []).length;
    current.firstId = page.comments && page.comments.length ? page.comments[0].id : null;
    commentsSummary(page, current.shown);
    afterNotices(page);
    setNextAfter(page.next_after);
    $("read-in-order").hidden = !(page.selection === "ends and middle" && current.firstId);
  }

  function setNextAfter(id) {
    current.nextAfter = id || null;
    $("load-more").hidden = !current.nextAfter;
  }

  async function loadAfter(after, replace) {
    const seq = threadSeq;
    let page;
    try {
      page = await api("thread", { ...threadKey(), after, focus: current.params.focus });
    } catch (err) {
      say("thread-message", err.message, true);
      return;
    }
    if (seq !== threadSeq) return;
    const body = $("thread-body");
    if (replace) {
      // keep the first comment, then read on from it in order
      const first = body.querySelector(".comment");
      clear(body);
      current.after = [];
      if (first) body.append(first);
      current.shown = first ? 1 : 0;
      $("read-in-order").hidden = true;
    }
    for (const node of current.after) node.remove();
    body.append(...noticeLines(page, "before"));
    (page.comments || []).forEach((c) => body.append(commentNode(c)));
    current.shown += (page.comments || []).length;
    commentsSummary(page, current.shown);
    afterNotices(page);
    setNextAfter(page.next_after);
  }

  $("load-more").addEventListener("click", () => {
    if (current && current.nextAfter) loadAfter(current.nextAfter, false);
  });

  $("read-in-order").addEventListener("click", () => {
    if (current && current.firstId) loadAfter(current.firstId, true);
  });

  $("thread-as-model").addEventListener("click", async () => {
    const params = { ...current.params, mode: current.params.mode || "page" };
    $("thread-model").hidden = false;
    $("thread-model-command").textContent = threadCommand(params);
    $("thread-model-text").textContent = "…";
    try {
      $("thread-model-text").textContent = await api("thread", { ...params, format: "text" }, { text: true });
    } catch (err) {
      $("thread-model-text").textContent = "";
      say("thread-message", err.message, true);
    }
  });

  // --- what the index holds -------------------------------------------------------------------

  async function loadIndex() {
    let page;
    try {
      page = await api("status", {});
    } catch (err) {
      say("index-status", err.message, true);
      return;
    }
    say("index-status", "");
    const repos = $("repos");
    clear(repos);
    const parts = [];
    for (const repo of page.repos) {
      repos.append(el("option", { value: repo.repo }));
      parts.push(`${repo.repo}: ${repo.threads} threads, ${repo.documents} documents`);
    }
    say("index-status", parts.length ? parts.join(" · ") : "nothing indexed yet");
    const field = $("f-repo");
    if (!field.value && page.repos.length === 1) field.value = page.repos[0].repo;
  }

  window.addEventListener("hashchange", route);
  showTokenState();
  loadIndex();
  route();
})();
