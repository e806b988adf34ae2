# shellcheck shell=bash disable=SC2034  # globals used by the sourcing scripts
# The private nginx of the local stack: prefix $VAR_DIR/nginx, rendered from nginx/local.conf.in
# plus the shared includes in nginx/portcullis/. Requires common.sh and common_init.

nginx_init_paths() {
  NGINX_PREFIX=$VAR_DIR/nginx
  NGINX_CONF=$NGINX_PREFIX/conf/nginx.conf
  NGINX_PIDFILE=$RUN_DIR/nginx.pid
  NGINX_ERROR_LOG=$LOG_DIR/nginx-error.log
}

# nginx_cmd ARGS...: nginx on our prefix and config. -e: the startup error log, opened before
# the configuration is read (otherwise a compiled-in path outside the var dir).
nginx_cmd() {
  nginx -p "$NGINX_PREFIX" -c "$NGINX_CONF" -e "$NGINX_ERROR_LOG" "$@"
}

# nginx_fastcgi_keepalive: idle kept-alive FastCGI connections per pool and nginx worker
# process (0 = off). A worker serves all the connections it holds (lib/runtime/fastcgi_loop.h),
# so an idle kept connection never starves a pool and the number is not bound to the pool's
# workers (docs/operations.md, "Kept-alive FastCGI"). PORTCULLIS_NGINX_FASTCGI_KEEPALIVE
# overrides the default of 32 (0 = a connection per request, for comparisons).
nginx_fastcgi_keepalive() {
  local n=${PORTCULLIS_NGINX_FASTCGI_KEEPALIVE:-32}
  [[ $n =~ ^[0-9]+$ ]] || die "PORTCULLIS_NGINX_FASTCGI_KEEPALIVE must be a number, got '$n'"
  printf '%s\n' "$n"
}

nginx_render() {
  local src=$REPO_ROOT/nginx user_directive="" keepalive keep_conn=off keepalive_block=""
  keepalive=$(nginx_fastcgi_keepalive)
  if ((keepalive > 0)); then
    keep_conn=on
    keepalive_block="keepalive $keepalive; keepalive_timeout 1s; keepalive_requests 1000; keepalive_time 5s;"
  fi
  mkdir -p "$NGINX_PREFIX"/{conf/portcullis,html} "$RUN_DIR" "$LOG_DIR" \
    "$NGINX_PREFIX"/tmp/{client_body,fastcgi,proxy,scgi,uwsgi}
  # As root, nginx's workers would run as "nobody" and could not connect() to the workers'
  # 0660 sockets. Local stacks only; production runs nginx as www-data (see docs).
  [[ $(id -u) -eq 0 ]] && user_directive="user root;"
  cp "$src"/portcullis/*.conf "$NGINX_PREFIX/conf/portcullis/"
  # The documents' cache zone (nginx/portcullis/document-cache-zone.conf) under the var dir;
  # nginx creates its last directory.
  mkdir -p "$NGINX_PREFIX/cache"
  sed "s#/var/lib/nginx/portcullis-documents#$NGINX_PREFIX/cache/documents#" \
    "$src/portcullis/document-cache-zone.conf" >"$NGINX_PREFIX/conf/portcullis/document-cache-zone.conf"
  grep -q "$NGINX_PREFIX/cache/documents" "$NGINX_PREFIX/conf/portcullis/document-cache-zone.conf" ||
    die "no cache path to replace in $src/portcullis/document-cache-zone.conf"
  sed -e "s#@VAR_DIR@#$VAR_DIR#g" \
    -e "s#@NGINX_PREFIX@#$NGINX_PREFIX#g" \
    -e "s#@RUN_DIR@#$RUN_DIR#g" \
    -e "s#@LOG_DIR@#$LOG_DIR#g" \
    -e "s#@LISTEN_ADDR@#$LISTEN_ADDR#g" \
    -e "s#@PORT@#$PORT#g" \
    -e "s#@DEMO_MCP_PORT@#$DEMO_MCP_PORT#g" \
    -e "s#@METRICS_PORT@#$METRICS_PORT#g" \
    -e "s#@USER_DIRECTIVE@#$user_directive#g" \
    -e "s#@WORKER_PROCESSES@#${PORTCULLIS_NGINX_WORKERS:-auto}#g" \
    -e "s#@FASTCGI_KEEP_CONN@#$keep_conn#g" \
    -e "s#@FASTCGI_KEEPALIVE_BLOCK@#$keepalive_block#g" \
    -e "s#@FASTCGI_KEEPALIVE@#$keepalive#g" \
    "$src/local.conf.in" >"$NGINX_CONF.tmp"
  if grep -n '@[A-Z_]*@' "$NGINX_CONF.tmp" >&2; then
    die "unsubstituted placeholder in $src/local.conf.in"
  fi
  mv "$NGINX_CONF.tmp" "$NGINX_CONF"
  printf '{"status":"ok","probe":"static"}\n' >"$NGINX_PREFIX/html/__static_probe.json"
}

nginx_test() {
  local out
  if ! out=$(nginx_cmd -t -q 2>&1); then
    printf '%s\n' "$out" >&2
    die "nginx configuration test failed ($NGINX_CONF)"
  fi
}

# nginx_target: ADDR:PORT the rendered configuration listens on (the running stack's, which
# may differ from this shell's PORTCULLIS_PORT); the configured one when nothing is rendered.
nginx_target() {
  local t=""
  [[ -f $NGINX_CONF ]] && t=$(sed -n 's/^ *listen *\([0-9.]*:[0-9]*\).*/\1/p' "$NGINX_CONF" | head -n 1)
  printf '%s\n' "${t:-$LISTEN_ADDR:$PORT}"
}

nginx_pid() { pid_alive "$NGINX_PIDFILE" nginx; }

# nginx_start: starts nginx, or reloads it when it is running (new config, no dropped requests).
nginx_start() {
  nginx_test
  if nginx_pid >/dev/null; then
    log "reloading nginx"
    nginx_cmd -s reload </dev/null >/dev/null 2>>"$NGINX_ERROR_LOG" 9>&-
  else
    log "starting nginx on $LISTEN_ADDR:$PORT"
    nginx_cmd </dev/null >/dev/null 2>>"$NGINX_ERROR_LOG" 9>&- || {
      tail_logs "$NGINX_ERROR_LOG"
      die "nginx failed to start (is $LISTEN_ADDR:$PORT already in use? see $NGINX_ERROR_LOG)"
    }
  fi
}

# nginx_stop: graceful quit (in-flight requests finish), then stop, then kill.
nginx_stop() {
  local pid
  pid=$(nginx_pid) || return 0
  log "stopping nginx (pid $pid)"
  kill -QUIT "$pid" 2>/dev/null || true
  if ! wait_pid_gone "$pid" "${PORTCULLIS_NGINX_STOP_TIMEOUT:-10}"; then
    warn "nginx did not quit in time; stopping it"
    kill -TERM "$pid" 2>/dev/null || true
    # nginx's master leads its own process group: take its workers along.
    wait_pid_gone "$pid" 5 || kill -KILL -- "-$pid" 2>/dev/null || true
  fi
}
