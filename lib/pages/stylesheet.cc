#include "pages/stylesheet.h"

#include "crypto/base64.h"
#include "crypto/hash.h"

namespace portcullis::pages {
namespace {

// Colours meet WCAG 2.1 AA (4.5:1 for text, 3:1 for borders and the focus ring) in both
// schemes. Inputs are 16 px or larger so phones do not zoom into them. Focus is always
// visible: a 3 px ring outside the element.
constexpr std::string_view kCss = R"CSS(
:root{color-scheme:light dark;--bg:#f6f8fa;--card:#fff;--text:#1f2328;--muted:#59636e;
--border:#d1d9e0;--field:#818b98;--accent:#1d4ed8;--accent-text:#fff;--accent-hover:#1e40af;
--ring:#1d4ed8;--alert-bg:#ffebe9;--alert-border:#cf222e;--alert-text:#82071e;
--warn-bg:#fff8c5;--warn-border:#9a6700;--warn-text:#3b2300;--chip:#eff2f5}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--card:#161b22;--text:#e6edf3;
--muted:#9ea8b3;--border:#3d444d;--field:#8b949e;--accent:#4493f8;--accent-text:#0d1117;
--accent-hover:#6cb6ff;--ring:#79c0ff;--alert-bg:#3c1618;--alert-border:#f85149;
--alert-text:#ffdcd7;--warn-bg:#2e2410;--warn-border:#d29922;--warn-text:#f8e3a1;
--chip:#262c36}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;min-height:100vh;display:flex;flex-direction:column;align-items:center;
background:var(--bg);color:var(--text);font:16px/1.5 system-ui,-apple-system,"Segoe UI",
Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif;padding:clamp(.75rem,4vw,3rem) .75rem}
main{width:100%;max-width:28rem;background:var(--card);border:1px solid var(--border);
border-radius:12px;padding:clamp(1.25rem,5vw,2.25rem);overflow-wrap:anywhere}
main>:last-child{margin-bottom:0}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 .5rem}
h2{font-size:1rem;margin:1.5rem 0 .5rem}
p{margin:0 0 1rem}
.lead{color:var(--muted)}
.lead strong,.eyebrow strong{color:var(--text)}
.eyebrow{color:var(--muted);font-size:.875rem;margin:0 0 .75rem}
bdi{unicode-bidi:isolate}
form{margin:0}
.stack{display:flex;flex-direction:column;gap:.5rem;margin-top:1.25rem}
label{font-weight:600}
input[type=email],input[type=text]{width:100%;font:inherit;font-size:1rem;color:var(--text);
background:var(--card);border:1px solid var(--field);border-radius:8px;padding:.625rem .75rem;
min-height:2.75rem}
input[aria-invalid=true]{border-color:var(--alert-border)}
.code-input{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
font-size:1.5rem;letter-spacing:.3em;text-align:center}
.help{color:var(--muted);font-size:.875rem;margin:0}
.button{display:inline-flex;align-items:center;justify-content:center;width:100%;
min-height:2.75rem;padding:.625rem 1rem;border-radius:8px;border:1px solid transparent;
font:inherit;font-weight:600;text-decoration:none;cursor:pointer}
.primary{background:var(--accent);color:var(--accent-text)}
.primary:hover{background:var(--accent-hover)}
.secondary{background:var(--card);color:var(--text);border-color:var(--field)}
.secondary:hover{background:var(--chip)}
.stack .button{margin-top:.75rem}
.link-button{background:none;border:0;padding:0;font:inherit;color:var(--accent);
text-decoration:underline;cursor:pointer}
a{color:var(--accent)}
:focus-visible{outline:3px solid var(--ring);outline-offset:2px}
input:focus-visible{outline-offset:0}
.alert,.warning{border-radius:8px;padding:.75rem 1rem;margin:0 0 1rem;border:1px solid}
.alert{background:var(--alert-bg);border-color:var(--alert-border);color:var(--alert-text)}
.warning{background:var(--warn-bg);border-color:var(--warn-border);color:var(--warn-text)}
.methods{list-style:none;margin:1.25rem 0 0;padding:0;display:flex;flex-direction:column;
gap:.5rem}
.divider{display:flex;align-items:center;gap:.75rem;color:var(--muted);font-size:.875rem;
margin:1.25rem 0 0}
.divider::before,.divider::after{content:"";flex:1;border-top:1px solid var(--border)}
.more{display:flex;flex-wrap:wrap;justify-content:space-between;gap:.5rem 1rem;
margin-top:1.25rem;font-size:.875rem}
.facts{margin:1rem 0;display:grid;grid-template-columns:auto 1fr;gap:.5rem 1rem}
.facts div{display:contents}
.facts dt{color:var(--muted)}
.facts dd{margin:0;font-weight:600}
.host{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-weight:400}
.scopes{list-style:none;margin:0 0 1.5rem;padding:0;border:1px solid var(--border);
border-radius:8px}
.scopes li{padding:.625rem .875rem}
.scopes li+li{border-top:1px solid var(--border)}
.scope-name{display:inline-block;margin-top:.125rem;font-size:.8125rem;color:var(--muted);
font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.actions{display:flex;gap:.75rem}
.actions .button{flex:1}
footer{margin-top:1.5rem;color:var(--muted);font-size:.8125rem;text-align:center}
@media (max-width:30rem){.facts{grid-template-columns:1fr;gap:0}.facts dd{margin-bottom:.5rem}
.actions{flex-direction:column}}
)CSS";

}  // namespace

std::string_view stylesheet() {
  return kCss;
}

const std::string& stylesheet_hash() {
  static const std::string hash = "sha256-" + crypto::base64_encode(crypto::sha256(kCss));
  return hash;
}

}  // namespace portcullis::pages
