#!/usr/bin/env python3
"""Rows for bench/scim/seed: N SCIM users of one directory, as tab-separated files for LOAD DATA.

  rows.py N ORG_ID DIRECTORY_ID GROUP_ID GROUP_MEMBERS SUFFIX OUT_DIR CHUNK

For each chunk K of CHUNK users: OUT_DIR/users-K.tsv (environment users), memberships-K.tsv
(provisioned_by scim), scim-K.tsv (scim_users: the canonical attributes the service stores),
emails-K.tsv (scim_user_emails), members-K.tsv (the first GROUP_MEMBERS users are members of
GROUP_ID) and counts-K.tsv last (listing_counts increments for 'users', the organization and
'scim_users:<org>', shards as lib/paging/counter.cc picks them), so the loader can take a chunk
while the next is made. Ids and create_times as bench/tools/user_rows.py makes them (ULIDs whose
time is the create_time, strictly rising over the past year). userName, emails[0].value and
externalId are derived from the user's index (bench/scim/measure.mjs asks for them by index).
"""
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from user_rows import FAMILY, GIVEN, Timeline, shard  # noqa: E402


def main():
    n, org, directory, group, group_members, suffix, out_dir, chunk = (
        int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6],
        sys.argv[7], int(sys.argv[8]))
    rng = random.Random(20261125)
    timeline = Timeline(n, rng)
    k = 0
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        counts = {}
        files = {name: open(os.path.join(out_dir, f"{name}-{k}.tsv"), "w")
                 for name in ("users", "memberships", "scim", "emails", "members")}
        for i in range(lo, hi):
            uid, ts = timeline.user(i)
            given, family = rng.choice(GIVEN), rng.choice(FAMILY)
            user_name = f"User.{i:07d}@Bench-{suffix}.example.com"
            email = f"u{i:07d}@mail-{suffix}.example.com"
            external_id = f"00u{suffix}{i:07d}"
            attributes = {
                "active": True,
                "displayName": f"{given} {family}",
                "emails": [{"primary": True, "type": "work", "value": email}],
                "externalId": external_id,
                "name": {"familyName": family, "givenName": given},
                "userName": user_name,
            }
            doc = json.dumps(attributes, separators=(",", ":"), sort_keys=True)
            files["users"].write(
                f"{uid}\t{email}\t0\t{given}\t{family}\t{given} {family}\t\\N\t1\t{{}}\t{ts}\t{ts}\n")
            files["memberships"].write(
                f"{org}\t{uid}\t{ts}\t[]\t{{}}\tactive\tscim\t{ts}\t{ts}\n")
            # organization_id, user_id, directory_id, user_name, user_name_key, external_id,
            # active, attributes, version, create_time, update_time, created_user
            files["scim"].write(
                f"{org}\t{uid}\t{directory}\t{user_name}\t{user_name.lower()}\t{external_id}\t1\t"
                f"{doc}\t1\t{ts}\t{ts}\t1\n")
            files["emails"].write(f"{org}\t{email.lower()[:255]}\t{uid}\n")
            if i < group_members:
                files["members"].write(f"{org}\t{group}\t{uid}\n")
            for scope in ("users", org, "scim_users:" + org):
                key = (scope, shard(uid))
                counts[key] = counts.get(key, 0) + 1
        for f in files.values():
            f.close()
        counts_file = os.path.join(out_dir, f"counts-{k}.tsv")
        with open(counts_file + ".tmp", "w") as f:
            for (scope, s), c in sorted(counts.items()):
                f.write(f"{scope}\t{s}\t{c}\n")
        os.rename(counts_file + ".tmp", counts_file)
        k += 1


if __name__ == "__main__":
    main()
