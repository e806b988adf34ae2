# shellcheck shell=bash disable=SC2034  # globals used by the sourcing scripts
# Refresh-token chains for the token endpoint benchmarks (bench/soak): a resource, a public DCR
# client and a user made through the running stack's APIs, then grants and refresh tokens
# seeded straight into the database — the interactive sign-in is not what is measured.
# bench/lua/refresh.lua rotates them: the seeded token "brt-<suffix>-<set>-<n>" starts chain n
# of set <set>; one set per wrk run, since a finished run leaves its chains rotated.
# Requires scripts/lib/{common,mariadb,nginx,stack}.sh, common_init and stack_init_paths.

# refresh_chains_setup SETS CHAINS: exports BENCH_SUFFIX, BENCH_CLIENT_ID and BENCH_CHAINS for
# refresh.lua; sets BASE (the stack's http://host:port).
refresh_chains_setup() {
  local sets=$1 chains=$2
  [[ -f $LOCAL_ENV ]] || die "no running stack in $VAR_DIR (scripts/run-local)"
  # shellcheck disable=SC1090
  . "$LOCAL_ENV"
  BASE="http://$(nginx_target)"
  local limit
  limit=$(awk -F= '$1 == "PORTCULLIS_RATE_LIMIT_TOKEN_PER_MINUTE" { print $2 }' "$CONF")
  [[ $limit == 0 ]] ||
    die "start the stack with PORTCULLIS_RATE_LIMIT_TOKEN_PER_MINUTE=0: the per-client limit would be what this measures"
  local token resource_id user_id now
  token=$(curl -sf -u "$PORTCULLIS_CLIENT_ID:$PORTCULLIS_CLIENT_SECRET" -d grant_type=client_credentials \
    "$BASE/oauth/token" | jq -r .access_token)
  export BENCH_SUFFIX BENCH_CLIENT_ID BENCH_CHAINS=$chains
  BENCH_SUFFIX=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
  resource_id=$(curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d "{\"name\":\"soak\",\"server_url\":\"https://soak-$BENCH_SUFFIX.test/mcp\",\"scopes\":[{\"name\":\"soak:read\",\"description\":\"soak\"}]}" \
    "$BASE/api/v1/resources" | jq -r .id)
  BENCH_CLIENT_ID=$(curl -sf -H 'Content-Type: application/json' \
    -d "{\"client_name\":\"soak\",\"redirect_uris\":[\"http://127.0.0.1:3000/callback\"],\"token_endpoint_auth_method\":\"none\",\"client_uri\":\"https://soak-$BENCH_SUFFIX.test\"}" \
    "$BASE/resources/$resource_id/client_register" | jq -r .client_id)
  user_id=$(curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d "{\"email\":\"soak-$BENCH_SUFFIX@example.com\",\"email_verified\":true}" \
    "$BASE/api/v1/users" | jq -r .id)
  [[ $resource_id == res_* && -n $BENCH_CLIENT_ID && $user_id == usr_* ]] ||
    die "could not create the resource, client and user through $BASE"
  now=$(date +%s)
  log "seeding $sets × $chains refresh chains for $BENCH_CLIENT_ID"
  db_sql "USE \`$DB_NAME\`;
    INSERT INTO grants (id, user_id, client_id, resource_id, scope, auth_time, create_time, absolute_expires_at)
      SELECT CONCAT('grt_s$BENCH_SUFFIX-', r.seq, '-', c.seq), '$user_id', '$BENCH_CLIENT_ID', '$resource_id',
        'soak:read', $now, UTC_TIMESTAMP(6), $now + 7 * 86400
      FROM seq_1_to_$sets r, seq_1_to_$chains c;
    INSERT INTO refresh_tokens (token_hash, grant_id, create_time, expires_at)
      SELECT UNHEX(SHA2(CONCAT('brt-$BENCH_SUFFIX-', r.seq, '-', c.seq), 256)),
        CONCAT('grt_s$BENCH_SUFFIX-', r.seq, '-', c.seq), UTC_TIMESTAMP(6), $now + 7 * 86400
      FROM seq_1_to_$sets r, seq_1_to_$chains c;" || die "could not seed the refresh chains"
}
