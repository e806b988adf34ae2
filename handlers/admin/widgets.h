// Form fields, tables and small pieces every portal page uses, each labelled for assistive
// technology (a <label for> per field, help text tied with aria-describedby).
#pragma once

#include <string>
#include <vector>

#include "portal.h"

namespace portcullis::admin_worker {

// <label> + <input type=`type`> (+ help). `required` adds the attribute.
Result<pages::Html> input_field(const std::string& name, const std::string& label,
                                const std::string& value, const std::string& type = "text",
                                const std::string& help = "", bool required = false);
Result<pages::Html> textarea_field(const std::string& name, const std::string& label,
                                   const std::string& value, const std::string& help = "");
Result<pages::Html> checkbox(const std::string& name, const std::string& label, bool checked,
                             const std::string& help = "");
// <select>: options as {value, label}.
Result<pages::Html> select_field(const std::string& name, const std::string& label,
                                 const std::vector<std::pair<std::string, std::string>>& options,
                                 const std::string& selected);

// A POST form with the CSRF field: `action` is a portal path without the leading slash;
// `confirm` non-empty makes the script ask first (data-confirm).
Result<pages::Html> post_form(const Admin& admin, const std::string& action, pages::Html fields,
                              const std::string& button, const std::string& button_class,
                              const std::string& confirm = "",
                              const std::string& form_class = "stack");

// A table with a caption and header row; `rows` are <tr>…</tr>. When there is no row, the
// `empty` text (what to do next) instead.
Result<pages::Html> table(const std::string& caption, const std::vector<std::string>& headers,
                          pages::Html rows, bool has_rows, const std::string& empty);
// <tr> of cells.
Result<pages::Html> row(std::vector<pages::Html> cells);
pages::Html text(const std::string& s);
// <a href="/admin/…">label</a>: `path` without the leading slash.
Result<pages::Html> link(const std::string& path, const std::string& label);
// A value with a copy button (the script adds it): <code data-copy>.
Result<pages::Html> copyable(const std::string& value, const std::string& what);
// Alerts: kind "notice" | "warning" | "alert".
Result<pages::Html> message(const std::string& kind, const std::string& text);
// <dl class="facts">: {term, value}.
Result<pages::Html> facts(const std::vector<std::pair<std::string, pages::Html>>& items);

// "12 Mar 2026 10:04 UTC" style timestamps are left as RFC 3339: exact and sortable.

}  // namespace portcullis::admin_worker
