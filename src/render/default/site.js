/* basepress: the site's script. Search, copy buttons, tabs, the theme
   button, the menu on narrow screens, a language switcher that keeps the
   reader's section, and the version picker. No dependencies, no request to any other host; the page
   works without it. */
(function () {
  "use strict";

  var body = document.body;
  document.documentElement.classList.add("js");

  /* A polite live region, for what the script does out of sight. */
  var announcer = document.createElement("p");
  announcer.className = "visually-hidden";
  announcer.setAttribute("role", "status");
  body.appendChild(announcer);
  function announce(text) {
    announcer.textContent = "";
    window.setTimeout(function () { announcer.textContent = text; }, 50);
  }

  /* ---- Copy buttons ------------------------------------------------- */

  function legacyCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); } catch (e) { /* nothing more to try */ }
    body.removeChild(area);
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { legacyCopy(text); });
    }
    legacyCopy(text);
    return Promise.resolve();
  }

  function addCopyButtons() {
    var label = body.getAttribute("data-copy") || "";
    var done = body.getAttribute("data-copied") || "";
    document.querySelectorAll("pre.code").forEach(function (pre) {
      var code = pre.querySelector("code") || pre;
      var wrap = document.createElement("div");
      wrap.className = "code-block";
      pre.parentNode.insertBefore(wrap, pre);
      wrap.appendChild(pre);
      var button = document.createElement("button");
      button.type = "button";
      button.className = "copy";
      button.textContent = label;
      button.addEventListener("click", function () {
        /* Exactly the code: the text of <code>, without the markup. */
        var text = code.textContent;
        button.setAttribute("data-copied", text);
        copyText(text).then(function () {
          button.textContent = done;
          button.classList.add("done");
          announce(done);
          window.setTimeout(function () {
            button.textContent = label;
            button.classList.remove("done");
          }, 2000);
        });
      });
      wrap.appendChild(button);
    });
  }

  /* ---- Search -------------------------------------------------------- */

  /* The search runs Pagefind's own script from the bundle of the page's
     docs version and language (the form's data-bundle, `/pagefind/1.29/`,
     and the language: `/pagefind/1.29/es/`): it loads the index in
     chunks, only those a query needs, and makes excerpts with the words
     marked. The bundle holds that version's pages in that language only. */

  var PAGE = 10;

  /* Copies Pagefind's excerpt (text with <mark>) as text and marks only,
     so that no markup of the index reaches the page. */
  function excerptNode(html) {
    var out = document.createElement("span");
    out.className = "result-excerpt";
    var doc = new DOMParser().parseFromString("<p>" + html + "</p>", "text/html");
    doc.body.firstChild.childNodes.forEach(function (n) {
      if (n.nodeName === "MARK") {
        var m = document.createElement("mark");
        m.textContent = n.textContent;
        out.appendChild(m);
      } else {
        out.appendChild(document.createTextNode(n.textContent));
      }
    });
    return out;
  }

  /* The part of a page that matched best: the section with most matched
     words, else the page itself. */
  function bestPart(data) {
    var best = null;
    (data.sub_results || []).forEach(function (sub) {
      var n = (sub.locations || []).length;
      if (!best || n > (best.locations || []).length) { best = sub; }
    });
    return best;
  }

  function setUpSearch(form) {
    var input = form.querySelector("input");
    var box = form.querySelector(".search-results");
    var status = form.querySelector("[role=status]");
    var bundle = form.getAttribute("data-bundle");
    var language = null;
    var loading = null;
    var current = null;
    var shown = 0;
    form.hidden = false;

    function engine() {
      if (!loading) {
        var dir = bundle + (language || document.documentElement.getAttribute("lang")) + "/";
        loading = import(dir + "pagefind.js").then(function (pf) {
          var prefix = body.getAttribute("data-prefix") || "";
          return pf.options({ basePath: dir, baseUrl: prefix + "/", excerptLength: 24 }).then(function () {
            /* Pagefind reads the index language from <html lang> when
               it starts; a 404 page searches the language asked for. */
            var root = document.documentElement;
            var own = root.getAttribute("lang");
            if (language) { root.setAttribute("lang", language); }
            var started = pf.init();
            if (language) { root.setAttribute("lang", own); }
            return started.then(function () { return pf; });
          });
        });
        loading.catch(function () { loading = null; });
      }
      return loading;
    }
    function close() {
      box.hidden = true;
    }
    function links() { return Array.prototype.slice.call(box.querySelectorAll("a")); }
    function resultItem(data) {
      var part = bestPart(data);
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = part ? part.url : data.url;
      var pageTitle = (data.meta && data.meta.title) || data.url;
      var heading = part && part.title && part.title !== pageTitle ? part.title : "";
      if (heading) {
        var page = document.createElement("span");
        page.className = "result-page";
        page.textContent = pageTitle;
        a.appendChild(page);
      }
      var title = document.createElement("span");
      title.className = "result-heading";
      title.textContent = heading || pageTitle;
      a.appendChild(title);
      a.appendChild(excerptNode(part ? part.excerpt : data.excerpt));
      a.addEventListener("click", close);
      li.appendChild(a);
      return li;
    }
    function showMore(list, results, text) {
      var next = results.slice(shown, shown + PAGE);
      shown += next.length;
      return Promise.all(next.map(function (r) { return r.data(); })).then(function (all) {
        if (input.value !== text) { return; }
        all.forEach(function (d) { list.appendChild(resultItem(d)); });
        var old = box.querySelector(".more");
        if (old) { old.parentNode.removeChild(old); }
        if (shown < results.length) {
          var more = document.createElement("button");
          more.type = "button";
          more.className = "more";
          more.textContent = form.getAttribute("data-more");
          more.addEventListener("click", function () {
            var focusAt = shown;
            showMore(list, results, text).then(function () {
              var all = links();
              if (all[focusAt]) { all[focusAt].focus(); }
            });
          });
          box.appendChild(more);
        }
      });
    }
    function show(search, text) {
      box.textContent = "";
      shown = 0;
      var results = search.results;
      if (!results.length) {
        var empty = document.createElement("p");
        empty.className = "empty";
        empty.textContent = form.getAttribute("data-none");
        box.appendChild(empty);
        status.textContent = form.getAttribute("data-none");
        box.hidden = false;
        return;
      }
      var list = document.createElement("ul");
      box.appendChild(list);
      showMore(list, results, text).then(function () {
        status.textContent = results.length + " " + form.getAttribute("data-results");
        box.hidden = false;
      });
    }
    function run() {
      var text = input.value;
      if (text.trim().length < 2) { close(); return; }
      current = text;
      engine().then(function (pf) {
        return pf.search(text);
      }).then(function (search) {
        if (search && current === text && input.value === text) { show(search, text); }
      });
    }

    input.addEventListener("focus", function () { engine(); });
    input.addEventListener("input", run);
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var first = links()[0];
      if (first) { first.click(); location.href = first.href; }
    });
    form.addEventListener("keydown", function (e) {
      var all = links();
      var at = all.indexOf(document.activeElement);
      if (e.key === "ArrowDown" && all.length) {
        e.preventDefault();
        all[Math.min(at + 1, all.length - 1)].focus();
      } else if (e.key === "ArrowUp" && at >= 0) {
        e.preventDefault();
        if (at === 0) { input.focus(); } else { all[at - 1].focus(); }
      } else if (e.key === "Escape") {
        close();
        input.focus();
      }
    });
    document.addEventListener("click", function (e) {
      if (!form.contains(e.target)) { close(); }
    });
    /* "/" or Ctrl-K (Cmd-K) from anywhere but a text field. */
    document.addEventListener("keydown", function (e) {
      var t = e.target;
      var typing = t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
      var slash = e.key === "/" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey;
      var k = (e.key === "k" || e.key === "K") && (e.ctrlKey || e.metaKey) && !e.altKey;
      if (slash || k) {
        e.preventDefault();
        input.focus();
        input.select();
      }
    });
    /* Search the language a 404 was asked for. */
    var notFound = document.querySelector(".not-found[data-languages]");
    if (notFound) {
      var prefix = body.getAttribute("data-prefix") || "";
      var rest = location.pathname.slice(prefix.length).split("/")[1];
      if (notFound.getAttribute("data-languages").split(" ").indexOf(rest) >= 0) {
        language = rest;
        form.setAttribute("data-language", rest);
        document.querySelectorAll("a.brand").forEach(function (a) {
          a.setAttribute("href", prefix + "/" + rest + "/");
        });
        var mine = notFound.querySelector('li[lang="' + rest + '"]');
        if (mine) {
          mine.classList.add("here");
          mine.parentNode.insertBefore(mine, mine.parentNode.firstChild);
        }
      }
    }
  }

  /* ---- Theme: the system's, light or dark --------------------------- */

  function setUpTheme(button) {
    var root = document.documentElement;
    var order = ["auto", "light", "dark"];
    var label = button.querySelector(".theme-label");
    function current() {
      var t = root.getAttribute("data-theme");
      return t === "light" || t === "dark" ? t : "auto";
    }
    function paint() {
      var t = current();
      label.textContent = button.getAttribute("data-" + t);
      button.setAttribute("data-current", t);
    }
    button.hidden = false;
    paint();
    button.addEventListener("click", function () {
      var next = order[(order.indexOf(current()) + 1) % order.length];
      if (next === "auto") { root.removeAttribute("data-theme"); } else { root.setAttribute("data-theme", next); }
      try {
        if (next === "auto") { localStorage.removeItem("basepress-theme"); } else { localStorage.setItem("basepress-theme", next); }
      } catch (e) { /* private mode: the choice lasts for this page */ }
      paint();
      announce(label.textContent);
    });
  }

  /* ---- Tabs: one panel at a time, the same choice on every page ----- */

  var TAB_KEY = "basepress-tab";

  function savedTab() {
    try { return localStorage.getItem(TAB_KEY); } catch (e) { return null; }
  }

  function setUpTabs(sets) {
    var all = [];
    sets.forEach(function (set, n) {
      var panels = Array.prototype.slice.call(set.querySelectorAll(":scope > .tab-panel"));
      if (panels.length < 2) { return; }
      var list = document.createElement("div");
      list.className = "tab-list";
      list.setAttribute("role", "tablist");
      var buttons = panels.map(function (panel, i) {
        var name = panel.getAttribute("data-tab");
        var b = document.createElement("button");
        b.type = "button";
        b.id = "tab-" + n + "-" + i;
        panel.id = panel.id || "tab-panel-" + n + "-" + i;
        b.setAttribute("role", "tab");
        b.setAttribute("aria-controls", panel.id);
        b.textContent = name;
        panel.setAttribute("role", "tabpanel");
        panel.setAttribute("aria-labelledby", b.id);
        b.addEventListener("click", function () {
          try { localStorage.setItem(TAB_KEY, name); } catch (e) { /* not remembered */ }
          all.forEach(function (s) { s.select(name, false); });
          select(name, true);
        });
        b.addEventListener("keydown", function (e) {
          var to = e.key === "ArrowRight" ? i + 1 : e.key === "ArrowLeft" ? i - 1 : null;
          if (to === null) { return; }
          e.preventDefault();
          var t = buttons[(to + buttons.length) % buttons.length];
          t.focus();
          t.click();
        });
        list.appendChild(b);
        return b;
      });
      function select(name, focus) {
        var at = panels.map(function (p) { return p.getAttribute("data-tab"); }).indexOf(name);
        if (at < 0) { return; }
        panels.forEach(function (p, i) {
          p.hidden = i !== at;
          buttons[i].setAttribute("aria-selected", i === at ? "true" : "false");
          buttons[i].tabIndex = i === at ? 0 : -1;
        });
        if (focus) { buttons[at].focus(); }
      }
      set.insertBefore(list, set.firstChild);
      set.classList.add("ready");
      select(panels[0].getAttribute("data-tab"), false);
      all.push({ select: select });
    });
    var saved = savedTab();
    if (saved) { all.forEach(function (s) { s.select(saved, false); }); }
  }

  /* ---- Menu on narrow screens --------------------------------------- */

  function setUpMenu(button) {
    var nav = document.getElementById(button.getAttribute("aria-controls"));
    if (!nav) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      var open = nav.classList.toggle("open");
      button.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }

  /* ---- Language switcher: same section in the other language --------- */

  function currentSection(headings) {
    var target = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
    var at = headings.indexOf(target);
    if (at >= 0) {
      var top = target.getBoundingClientRect().top;
      if (top >= 0 && top < window.innerHeight) { return at; }
    }
    at = -1;
    headings.forEach(function (h, i) {
      if (h.getBoundingClientRect().top <= 120) { at = i; }
    });
    return at;
  }

  function setUpSwitcher() {
    var article = document.querySelector("article");
    if (!article) { return; }
    document.querySelectorAll(".languages a[data-anchors]").forEach(function (link) {
      link.addEventListener("click", function (e) {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button) { return; }
        var headings = Array.prototype.slice.call(
          article.querySelectorAll("h1[id], h2[id], h3[id], h4[id], h5[id], h6[id]"));
        var anchors = link.getAttribute("data-anchors").split(" ");
        var at = currentSection(headings);
        if (at < 0 || !anchors[at]) { return; }
        e.preventDefault();
        location.href = link.href.split("#")[0] + "#" + anchors[at];
      });
    });
  }

  /* ---- Version picker: closes like a menu --------------------------- */

  function setUpPickers() {
    var pickers = document.querySelectorAll("details.versions");
    document.addEventListener("click", function (e) {
      pickers.forEach(function (d) { if (!d.contains(e.target)) { d.open = false; } });
    });
    document.addEventListener("keydown", function (e) {
      if (e.key !== "Escape") { return; }
      pickers.forEach(function (d) {
        if (d.open) { d.open = false; d.querySelector("summary").focus(); }
      });
    });
  }

  /* ---- Table of contents: mark the section in view ------------------ */

  function setUpToc() {
    var links = document.querySelectorAll(".toc a[href^='#']");
    if (!links.length || !("IntersectionObserver" in window)) { return; }
    var byId = {};
    links.forEach(function (a) { byId[decodeURIComponent(a.getAttribute("href").slice(1))] = a; });
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (!entry.isIntersecting) { return; }
        links.forEach(function (a) { a.classList.remove("active"); });
        var a = byId[entry.target.id];
        if (a) { a.classList.add("active"); }
      });
    }, { rootMargin: "0px 0px -70% 0px" });
    Object.keys(byId).forEach(function (id) {
      var h = document.getElementById(id);
      if (h) { observer.observe(h); }
    });
  }

  addCopyButtons();
  setUpTabs(Array.prototype.slice.call(document.querySelectorAll(".tabs")));
  document.querySelectorAll("form.search").forEach(setUpSearch);
  document.querySelectorAll("button.theme").forEach(setUpTheme);
  document.querySelectorAll("button.menu").forEach(setUpMenu);
  setUpSwitcher();
  setUpPickers();
  setUpToc();
})();
