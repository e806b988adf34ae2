-- Sorted and filtered SCIM user lists page by keyset too (issue 11; docs/scim.md §7).
-- sort_value: the sort value (sortBy) of the row where a page ended, as text; NULL when that
-- value is NULL or the list is in creation order. exact: `position` is the list's offset of that
-- row in this generation. A page that follows a page served in an earlier generation goes on
-- after that page's last row (every row of a walk exactly once while the list changes), and its
-- own mark is then not exact: the rows served before it need not be the list's current ones, so
-- a jump never starts from it. ScimStore is the only writer.
-- The next page finds the mark at its position in any generation (newest first) by
-- scim_list_marks_position.
ALTER TABLE scim_list_marks
  ADD COLUMN IF NOT EXISTS sort_value TEXT NULL COLLATE utf8mb4_bin,
  ADD COLUMN IF NOT EXISTS exact BOOLEAN NOT NULL DEFAULT TRUE,
  ADD KEY IF NOT EXISTS scim_list_marks_position (organization_id, query_key, position, generation);
