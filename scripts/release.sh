#!/usr/bin/env bash
# Makes release vX.Y.Z (docs/release.md): checks the version against package.json and CHANGELOG.md, tags,
# builds the npm tarball and the single executables, writes checksums and the notes, all under release/.
#
#   scripts/release.sh vX.Y.Z             tag (when HEAD has no such tag yet), build, checksums, notes
#   scripts/release.sh --notes vX.Y.Z     print only the notes of that version from CHANGELOG.md
#
# The tag is made here but not pushed: `git push origin vX.Y.Z` starts .github/workflows/release.yml,
# which runs this script on the tag and publishes what it leaves in release/.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "release: $*" >&2; exit 1; }

notes_only=
if [[ "${1:-}" == "--notes" ]]; then notes_only=1; shift; fi
tag="${1:-}"
[[ "$tag" =~ ^v([0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?)$ ]] || fail "give the version as vX.Y.Z (got '${tag}')"
version="${BASH_REMATCH[1]}"

# The section `## [X.Y.Z]` of CHANGELOG.md up to the next `## ` heading, without its heading.
notes="$(awk -v v="$version" '
  index($0, "## [" v "]") == 1 { on = 1; next }
  on && /^## / { exit }
  on { print }
' CHANGELOG.md | sed -e '/./,$!d')"
[[ -n "$notes" ]] || fail "CHANGELOG.md has no section '## [$version]': write the release notes there first"
if [[ -n "$notes_only" ]]; then printf '%s\n' "$notes"; exit 0; fi

package_version="$(node -p "require('./package.json').version")"
[[ "$package_version" == "$version" ]] || fail "package.json has version $package_version, not $version: bump it first (npm version $version --no-git-tag-version)"

# Tag: the workflow runs on an existing tag; by hand, a clean tree at HEAD gets an annotated one.
if git rev-parse -q --verify "refs/tags/$tag" >/dev/null; then
  [[ "$(git rev-list -n 1 "$tag")" == "$(git rev-parse HEAD)" ]] || fail "tag $tag exists but is not HEAD"
else
  [[ -z "$(git status --porcelain)" ]] || fail "the working tree has uncommitted changes: commit them before tagging $tag"
  git tag -a "$tag" -m "resonant-crystal $tag"
  echo "release: tagged $tag (push it with: git push origin $tag)" >&2
fi

out=release
mkdir -p "$out"
rm -f "$out"/*.tar.gz "$out"/*.zip "$out"/*.tgz "$out"/*.sha256 "$out"/SHA256SUMS "$out"/notes-*.md
npm run build
npm pack --ignore-scripts --pack-destination "$out" >/dev/null
node scripts/sea/build.mjs --targets all --out "$out"
(
  cd "$out"
  tarball="resonant-crystal-$version.tgz"
  sha256sum "$tarball" >"$tarball.sha256"
  cat ./*.sha256 >SHA256SUMS
  sha256sum -c SHA256SUMS
)
printf '%s\n' "$notes" >"$out/notes-$tag.md"
echo "release: $tag is in $out/ (archives, .sha256 files, SHA256SUMS, notes-$tag.md)" >&2
