-- SCIM group → role re-evaluations too large for the request that changed the mapping
-- (PATCH /organizations/{id} scim_group_roles beyond kMaxRoleReevaluation members; docs/scim.md
-- §6), done in the background by the portcullis-webhooks process (scim::run_role_job in
-- lib/scim/scim_store.h), a slice of members at a time. One row per organization: the group
-- names and roles of the mappings replaced since the job was queued (the current mapping is
-- read at every slice), and the last member done (members in user id order). ScimStore is the
-- only writer.
CREATE TABLE IF NOT EXISTS scim_role_jobs (
  organization_id VARCHAR(40) NOT NULL COLLATE utf8mb4_bin,
  previous_names  JSON        NOT NULL,
  previous_roles  JSON        NOT NULL,
  after_user_id   VARCHAR(40) NULL COLLATE utf8mb4_bin,
  create_time     DATETIME(6) NOT NULL,
  update_time     DATETIME(6) NOT NULL,
  PRIMARY KEY (organization_id),
  KEY scim_role_jobs_due (update_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
