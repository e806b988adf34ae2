#!/usr/bin/env python3
"""Rows for bench/seed-users: N users of one organization as tab-separated files for LOAD DATA.

  user_rows.py N ORG_ID SUFFIX OUT_DIR CHUNK

Writes OUT_DIR/users-K.tsv, OUT_DIR/memberships-K.tsv and OUT_DIR/counts-K.tsv for each chunk K
of CHUNK users (counts-K.tsv last, so the loader can start on a chunk while the next is made). The rows are what the service itself would store:

- ids are ULIDs (`usr_` + 10 characters of millisecond time + 16 random, lowercase Crockford
  base32), their time part equal to the user's create_time, so they sort as created;
- create_times rise strictly over the past year (about one user every 31 s for a million),
  with jitter, the way sign-ups arrive;
- each membership copies its user's create_time (memberships.user_create_time) and joins then;
- counts-K.tsv holds the listing_counts increments of the chunk, per shard, for the scopes
  'users' and ORG_ID, with the shard chosen as lib/paging/counter.cc does (FNV-1a of the user
  id modulo 16), so the counters stay exact row by row.
"""
import datetime
import os
import random
import sys

CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
SHARDS = 16
GIVEN = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Margaret", "Dennis",
         "Radia", "Leslie", "Shafi", "Tim", "Sophie", "John", "Hedy", "Linus", "Anita", "Niklaus"]
FAMILY = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Hamilton",
          "Ritchie", "Perlman", "Lamport", "Goldwasser", "Berners-Lee", "Wilson", "McCarthy", "Lamarr",
          "Torvalds", "Borg", "Wirth"]


def ulid(millis, rng):
    t = "".join(CROCKFORD[(millis >> (5 * (9 - i))) & 31] for i in range(10))
    r = rng.getrandbits(80)
    return t + "".join(CROCKFORD[(r >> (5 * (15 - i))) & 31] for i in range(16))


def shard(row_id):
    h = 2166136261
    for b in row_id.encode():
        h ^= b
        h = (h * 16777619) & 0xFFFFFFFF
    return h % SHARDS


class Timeline:
    """The id and create_time of user i of n: strictly increasing over the past year, each user in
    its own slot of the span with jitter, the id a ULID of that time (also bench/scim/rows.py)."""

    def __init__(self, n, rng):
        now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        span_us = 365 * 86400 * 1_000_000
        self.step = span_us // n
        self.start = now - datetime.timedelta(microseconds=span_us + 3600 * 1_000_000)
        self.rng = rng

    def user(self, i):
        t = self.start + datetime.timedelta(
            microseconds=i * self.step + self.rng.randrange(max(1, self.step // 2)))
        millis = (t - datetime.datetime(1970, 1, 1)) // datetime.timedelta(milliseconds=1)
        return "usr_" + ulid(millis, self.rng), t.strftime("%Y-%m-%d %H:%M:%S.%f")


def main():
    n, org, suffix, out_dir, chunk = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    rng = random.Random()
    timeline = Timeline(n, rng)
    chunks = 0
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        counts = [0] * SHARDS
        with open(os.path.join(out_dir, f"users-{chunks}.tsv"), "w") as users, \
                open(os.path.join(out_dir, f"memberships-{chunks}.tsv"), "w") as members:
            for i in range(lo, hi):
                uid, ts = timeline.user(i)
                given, family = rng.choice(GIVEN), rng.choice(FAMILY)
                email = f"{given.lower()}.{family.lower()}.{i:07d}@bench-{suffix}.example.com"
                # id, email, email_verified, given_name, family_name, display_name, external_id,
                # active, metadata, create_time, update_time
                users.write(f"{uid}\t{email}\t1\t{given}\t{family}\t{given} {family}\t\\N\t1\t{{}}\t{ts}\t{ts}\n")
                role = "admin" if i % 1000 == 0 else "member"
                # organization_id, user_id, user_create_time, roles, metadata, status,
                # provisioned_by, join_time, update_time
                members.write(f"{org}\t{uid}\t{ts}\t[{{\"name\":\"{role}\"}}]\t{{}}\tactive\tapi\t{ts}\t{ts}\n")
                counts[shard(uid)] += 1
        # Written last and renamed into place: its appearance tells the loader the chunk is whole.
        counts_file = os.path.join(out_dir, f"counts-{chunks}.tsv")
        with open(counts_file + ".tmp", "w") as f:
            for scope in ("users", org):
                for s, c in enumerate(counts):
                    if c:
                        f.write(f"{scope}\t{s}\t{c}\n")
        os.rename(counts_file + ".tmp", counts_file)
        chunks += 1


if __name__ == "__main__":
    main()
