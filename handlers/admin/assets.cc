// The portal's stylesheet and its one small script, served by the worker itself so the pages'
// CSP can say `style-src 'self'; script-src 'self'` with nothing inline. Everything works
// without the script: it only adds copy buttons and a confirmation before destructive forms.
#include "portal.h"

namespace portcullis::admin_worker {
namespace {

// Colours meet WCAG 2.1 AA in both schemes (the sign-in pages' palette); focus always visible.
constexpr std::string_view kCss = R"CSS(:root{color-scheme:light dark;--bg:#f6f8fa;--card:#fff;
--text:#1f2328;--muted:#59636e;--border:#d1d9e0;--field:#818b98;--accent:#1d4ed8;
--accent-text:#fff;--accent-hover:#1e40af;--ring:#1d4ed8;--danger:#b42318;--danger-text:#fff;
--alert-bg:#ffebe9;--alert-border:#cf222e;--alert-text:#82071e;--warn-bg:#fff8c5;
--warn-border:#9a6700;--warn-text:#3b2300;--ok-bg:#dafbe1;--ok-border:#1a7f37;--ok-text:#0f3d1d;
--chip:#eff2f5}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--card:#161b22;--text:#e6edf3;
--muted:#9ea8b3;--border:#3d444d;--field:#8b949e;--accent:#4493f8;--accent-text:#0d1117;
--accent-hover:#6cb6ff;--ring:#79c0ff;--danger:#f85149;--danger-text:#0d1117;
--alert-bg:#3c1618;--alert-border:#f85149;--alert-text:#ffdcd7;--warn-bg:#2e2410;
--warn-border:#d29922;--warn-text:#f8e3a1;--ok-bg:#12261e;--ok-border:#3fb950;
--ok-text:#aff5b4;--chip:#262c36}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--text);font:16px/1.5 system-ui,-apple-system,
"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif;min-height:100vh;display:flex;
flex-direction:column}
.skip{position:absolute;left:.5rem;top:-3rem;background:var(--card);color:var(--accent);
padding:.5rem 1rem;border:2px solid var(--ring);border-radius:8px;z-index:10}
.skip:focus{top:.5rem}
.top{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem;padding:.75rem 1rem;
background:var(--card);border-bottom:1px solid var(--border)}
.brand{font-weight:700;color:var(--text);text-decoration:none}
.top nav ul{display:flex;flex-wrap:wrap;gap:.25rem .75rem;list-style:none;margin:0;padding:0}
.top nav a{display:inline-block;padding:.375rem .25rem;color:var(--accent)}
.top nav a[aria-current=page]{color:var(--text);font-weight:700;text-decoration-thickness:3px}
.account{margin-left:auto;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem}
.who{color:var(--muted);font-size:.875rem;overflow-wrap:anywhere}
main{flex:1;width:100%;max-width:72rem;margin:0 auto;padding:1rem;overflow-wrap:anywhere}
main:focus{outline:none}
.bottom{color:var(--muted);font-size:.875rem;text-align:center;padding:1rem}
h1{font-size:1.5rem;line-height:1.25;margin:.5rem 0 1rem}
h2{font-size:1.125rem;margin:2rem 0 .75rem}
p{margin:0 0 1rem}
a{color:var(--accent)}
:focus-visible{outline:3px solid var(--ring);outline-offset:2px}
.muted{color:var(--muted)}
.panel{background:var(--card);border:1px solid var(--border);border-radius:12px;padding:1rem;
margin:0 0 1rem}
.panel>h2:first-child{margin-top:0}
.grid{display:grid;gap:1rem;grid-template-columns:repeat(auto-fill,minmax(15rem,1fr))}
.table-wrap{overflow-x:auto;background:var(--card);border:1px solid var(--border);
border-radius:12px;margin:0 0 1rem}
table{border-collapse:collapse;width:100%;font-size:.9375rem}
caption{text-align:left;padding:.75rem 1rem 0;font-weight:600}
th,td{text-align:left;padding:.5rem 1rem;border-bottom:1px solid var(--border);vertical-align:top}
tr:last-child td{border-bottom:0}
th{font-weight:600;color:var(--muted);font-size:.875rem}
dl.facts{display:grid;grid-template-columns:minmax(8rem,max-content) 1fr;gap:.375rem 1rem;margin:0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0}
@media (max-width:40rem){dl.facts{grid-template-columns:1fr}dl.facts dd{margin-bottom:.5rem}}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.875em}
.secret{display:block;padding:.5rem .75rem;background:var(--chip);border-radius:8px;
overflow-wrap:anywhere}
form.stack{display:flex;flex-direction:column;gap:.375rem;max-width:36rem}
form.inline{display:inline-flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:0}
form.search{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end;margin:0 0 1rem}
form.search>div{display:flex;flex-direction:column;gap:.25rem}
label{font-weight:600}
fieldset{border:1px solid var(--border);border-radius:8px;padding:.5rem 1rem 1rem;margin:.5rem 0}
legend{font-weight:600;padding:0 .25rem}
.check{display:flex;gap:.5rem;align-items:center;font-weight:400}
input[type=text],input[type=email],input[type=url],input[type=number],input[type=search],
select,textarea{font:inherit;color:var(--text);background:var(--card);border:1px solid var(--field);
border-radius:8px;padding:.5rem .625rem;min-height:2.5rem;width:100%;max-width:36rem}
textarea{min-height:8rem;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
font-size:.875rem}
input[type=checkbox]{width:1.25rem;height:1.25rem}
.help{color:var(--muted);font-size:.875rem;margin:0}
.button{display:inline-flex;align-items:center;justify-content:center;min-height:2.5rem;
padding:.5rem 1rem;border-radius:8px;border:1px solid transparent;font:inherit;font-weight:600;
text-decoration:none;cursor:pointer;white-space:nowrap}
.button.small{min-height:2rem;padding:.25rem .75rem;font-size:.875rem}
.primary{background:var(--accent);color:var(--accent-text)}
.primary:hover{background:var(--accent-hover)}
.secondary{background:var(--card);color:var(--text);border-color:var(--field)}
.secondary:hover{background:var(--chip)}
.danger{background:var(--danger);color:var(--danger-text)}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:1rem 0}
.alert,.warning,.notice{border-radius:8px;padding:.75rem 1rem;margin:0 0 1rem;border:1px solid}
.alert{background:var(--alert-bg);border-color:var(--alert-border);color:var(--alert-text)}
.warning{background:var(--warn-bg);border-color:var(--warn-border);color:var(--warn-text)}
.notice{background:var(--ok-bg);border-color:var(--ok-border);color:var(--ok-text)}
.badge{display:inline-block;padding:0 .5rem;border-radius:999px;background:var(--chip);
font-size:.8125rem;border:1px solid var(--border)}
.empty{padding:1rem;color:var(--muted)}
.pager{display:flex;gap:1rem;align-items:center;flex-wrap:wrap;margin:0 0 1rem}
.copy{margin-left:.5rem}
)CSS";

constexpr std::string_view kJs = R"JS(// Portcullis admin portal: progressive enhancement only.
'use strict';
document.addEventListener('DOMContentLoaded', () => {
  // Copy buttons beside [data-copy] values (tokens, secrets, URLs, DNS records).
  for (const el of document.querySelectorAll('[data-copy]')) {
    if (!navigator.clipboard) break;
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'button secondary small copy';
    b.textContent = 'Copy';
    b.setAttribute('aria-label', 'Copy ' + (el.getAttribute('data-copy') || 'value'));
    b.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(el.textContent.trim());
        b.textContent = 'Copied';
      } catch (e) {
        b.textContent = 'Copy failed';
      }
      setTimeout(() => { b.textContent = 'Copy'; }, 2000);
    });
    el.insertAdjacentElement('afterend', b);
  }
  // Destructive forms ask first (the server never relies on it).
  for (const f of document.querySelectorAll('form[data-confirm]')) {
    f.addEventListener('submit', (e) => {
      if (!window.confirm(f.getAttribute('data-confirm'))) e.preventDefault();
    });
  }
  // The events page's live tail: reload while the box is ticked.
  const tail = document.querySelector('[data-live-tail]');
  if (tail && tail.checked) setTimeout(() => window.location.reload(), 5000);
});
)JS";

Result<http::Response> asset(std::string_view body, std::string_view type) {
  http::Response r = http::Response::text(200, std::string(body), type);
  r.set_header("Cache-Control", "public, max-age=300");
  return r;
}

}  // namespace

void install_static_routes(server::App& app) {
  app.add("GET", "/admin/static/admin.css", server::Route{.handler = [](server::Context&) {
            return asset(kCss, "text/css; charset=utf-8");
          }});
  app.add("GET", "/admin/static/admin.js", server::Route{.handler = [](server::Context&) {
            return asset(kJs, "text/javascript; charset=utf-8");
          }});
}

}  // namespace portcullis::admin_worker
