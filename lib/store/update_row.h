// Read-modify-write of one row: the row with `id`, read FOR UPDATE inside a transaction,
// parsed, handed to `change` (which edits the value and writes it back), and returned as
// written. NotFound with `not_found` when there is no such row.
#pragma once

#include <string>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::store {

// `select_from` is "SELECT <columns> FROM <table>"; `parse` turns a row into Result<T>;
// `change` is Status(T&).
template <typename T, typename Parse, typename Change>
Result<T> update_row(Db& db, const std::string& select_from, const std::string& id,
                     const std::string& not_found, Parse parse, Change change) {
  T updated;
  Status st = db.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(Rows rows,
                                db.query(select_from + " WHERE id = ? FOR UPDATE", {id}));
    if (rows.empty()) return Status::not_found(not_found);
    PORTCULLIS_ASSIGN_OR_RETURN(updated, parse(rows[0]));
    return change(updated);
  });
  if (!st.is_ok()) return st;
  return updated;
}

}  // namespace portcullis::store
