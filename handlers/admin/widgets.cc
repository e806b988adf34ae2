#include "widgets.h"

namespace portcullis::admin_worker {
namespace {

Result<pages::Html> help_of(const std::string& name, const std::string& help) {
  if (help.empty()) return pages::Html();
  return html(R"(<p class="help" id="{{name}}-help">{{help}}</p>)",
              {{"name", name}, {"help", help}});
}

}  // namespace

Result<pages::Html> input_field(const std::string& name, const std::string& label,
                                const std::string& value, const std::string& type,
                                const std::string& help, bool required) {
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html h, help_of(name, help));
  // aria-describedby only when the help exists: an id reference to nothing is an error.
  static constexpr std::string_view kTemplates[2][2] = {
      {R"(<label for="f-{{name}}">{{label}}</label>
<input type="{{type}}" id="f-{{name}}" name="{{name}}" value="{{value}}">{{help}})",
       R"(<label for="f-{{name}}">{{label}}</label>
<input type="{{type}}" id="f-{{name}}" name="{{name}}" value="{{value}}" required>{{help}})"},
      {R"(<label for="f-{{name}}">{{label}}</label>
<input type="{{type}}" id="f-{{name}}" name="{{name}}" value="{{value}}" aria-describedby="{{name}}-help">{{help}})",
       R"(<label for="f-{{name}}">{{label}}</label>
<input type="{{type}}" id="f-{{name}}" name="{{name}}" value="{{value}}" aria-describedby="{{name}}-help" required>{{help}})"}};
  return html(kTemplates[help.empty() ? 0 : 1][required ? 1 : 0],
              {{"name", name}, {"label", label}, {"type", type}, {"value", value}, {"help", h}});
}

Result<pages::Html> textarea_field(const std::string& name, const std::string& label,
                                   const std::string& value, const std::string& help) {
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html h, help_of(name, help));
  return html(help.empty() ? R"(<label for="f-{{name}}">{{label}}</label>
<textarea id="f-{{name}}" name="{{name}}">{{value}}</textarea>{{help}})"
                           : R"(<label for="f-{{name}}">{{label}}</label>
<textarea id="f-{{name}}" name="{{name}}" aria-describedby="{{name}}-help">{{value}}</textarea>{{help}})",
              {{"name", name}, {"label", label}, {"value", value}, {"help", h}});
}

Result<pages::Html> checkbox(const std::string& name, const std::string& label, bool checked,
                             const std::string& help) {
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html h, help_of(name, help));
  static constexpr std::string_view kTemplates[2][2] = {
      {R"(<label class="check"><input type="checkbox" name="{{name}}" value="1"> {{label}}</label>{{help}})",
       R"(<label class="check"><input type="checkbox" name="{{name}}" value="1" checked> {{label}}</label>{{help}})"},
      {R"(<label class="check"><input type="checkbox" name="{{name}}" value="1" aria-describedby="{{name}}-help"> {{label}}</label>{{help}})",
       R"(<label class="check"><input type="checkbox" name="{{name}}" value="1" checked aria-describedby="{{name}}-help"> {{label}}</label>{{help}})"}};
  return html(kTemplates[help.empty() ? 0 : 1][checked ? 1 : 0],
              {{"name", name}, {"label", label}, {"help", h}});
}

Result<pages::Html> select_field(const std::string& name, const std::string& label,
                                 const std::vector<std::pair<std::string, std::string>>& options,
                                 const std::string& selected) {
  pages::Html items;
  for (const auto& [value, text] : options) {
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html o, html(value == selected ? R"(<option value="{{v}}" selected>{{t}}</option>)"
                                              : R"(<option value="{{v}}">{{t}}</option>)",
                            {{"v", value}, {"t", text}}));
    items += o;
  }
  return html(R"(<label for="f-{{name}}">{{label}}</label>
<select id="f-{{name}}" name="{{name}}">{{items}}</select>)",
              {{"name", name}, {"label", label}, {"items", items}});
}

Result<pages::Html> post_form(const Admin& admin, const std::string& action, pages::Html fields,
                              const std::string& button, const std::string& button_class,
                              const std::string& confirm, const std::string& form_class) {
  if (!confirm.empty()) {
    return html(
        R"(<form class="{{class}}" method="post" action="/{{action}}" data-confirm="{{confirm}}">
{{csrf}}{{fields}}
<div class="actions"><button type="submit" class="button {{bclass}}">{{button}}</button></div>
</form>)",
        {{"class", form_class},
         {"action", action},
         {"confirm", confirm},
         {"csrf", csrf_field(admin)},
         {"fields", std::move(fields)},
         {"bclass", button_class},
         {"button", button}});
  }
  return html(R"(<form class="{{class}}" method="post" action="/{{action}}">
{{csrf}}{{fields}}
<div class="actions"><button type="submit" class="button {{bclass}}">{{button}}</button></div>
</form>)",
              {{"class", form_class},
               {"action", action},
               {"csrf", csrf_field(admin)},
               {"fields", std::move(fields)},
               {"bclass", button_class},
               {"button", button}});
}

Result<pages::Html> table(const std::string& caption, const std::vector<std::string>& headers,
                          pages::Html rows, bool has_rows, const std::string& empty) {
  if (!has_rows) {
    return html(
        R"(<div class="panel empty"><p><strong>{{caption}}:</strong> none yet.</p><p>{{empty}}</p></div>)",
        {{"caption", caption}, {"empty", empty}});
  }
  pages::Html head;
  for (const auto& h : headers) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html th, html(R"(<th scope="col">{{h}}</th>)", {{"h", h}}));
    head += th;
  }
  // A table wider than the screen scrolls in its box, which keyboard users reach by Tab.
  return html(R"(<div class="table-wrap" tabindex="0" role="region" aria-label="{{caption}}"><table>
<caption>{{caption}}</caption>
<thead><tr>{{head}}</tr></thead>
<tbody>{{rows}}</tbody>
</table></div>)",
              {{"caption", caption}, {"head", head}, {"rows", std::move(rows)}});
}

Result<pages::Html> row(std::vector<pages::Html> cells) {
  pages::Html tds;
  for (auto& c : cells) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html td, html("<td>{{c}}</td>", {{"c", std::move(c)}}));
    tds += td;
  }
  return html("<tr>{{cells}}</tr>\n", {{"cells", tds}});
}

pages::Html text(const std::string& s) {
  return pages::Html::escape(s);
}

Result<pages::Html> link(const std::string& path, const std::string& label) {
  return html(R"(<a href="/{{path}}">{{label}}</a>)", {{"path", path}, {"label", label}});
}

Result<pages::Html> copyable(const std::string& value, const std::string& what) {
  return html(R"(<code class="secret" data-copy="{{what}}">{{value}}</code>)",
              {{"what", what}, {"value", value}});
}

Result<pages::Html> message(const std::string& kind, const std::string& text) {
  return html(R"(<div class="{{kind}}" role="status">{{text}}</div>)",
              {{"kind", kind}, {"text", text}});
}

Result<pages::Html> facts(const std::vector<std::pair<std::string, pages::Html>>& items) {
  pages::Html body;
  for (const auto& [term, value] : items) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html item,
                                html("<dt>{{t}}</dt><dd>{{v}}</dd>", {{"t", term}, {"v", value}}));
    body += item;
  }
  return html(R"(<dl class="facts">{{body}}</dl>)", {{"body", body}});
}

}  // namespace portcullis::admin_worker
