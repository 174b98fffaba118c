//! Findings: every problem basepress reports is a [`Diagnostic`] raised by a
//! named [`Rule`], so people and scripts can rely on stable ids.

use serde::Serialize;
use std::path::{Path, PathBuf};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// What a rule is about, which decides the exit code of an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// The input cannot be read or parsed: exit code 2.
    Input,
    /// The input was read, and a check found it wrong: exit code 1.
    Check,
}

/// A named check with a stable id, a one-line description and a remedy.
#[derive(Debug, Serialize)]
pub struct Rule {
    pub id: &'static str,
    pub class: Class,
    pub severity: Severity,
    pub description: &'static str,
    pub remedy: &'static str,
}

macro_rules! rules {
    ($( $konst:ident = $id:literal, $class:ident, $sev:ident, $desc:literal, $remedy:literal; )*) => {
        $( pub const $konst: &Rule = &Rule {
            id: $id, class: Class::$class, severity: Severity::$sev,
            description: $desc, remedy: $remedy,
        }; )*
        /// Every rule basepress knows, in the order `basepress rules` lists them.
        pub const ALL: &[&Rule] = &[$($konst),*];
    };
}

/// The rule catalogue.
pub mod rule {
    use super::{Class, Rule, Severity};

    rules! {
        IO_UNREADABLE = "io-unreadable", Input, Error,
            "A file or folder that the build needs cannot be read.",
            "Check that the path exists and is readable, then run again.";
        CONFIG_INVALID = "config-invalid", Input, Error,
            "site.yaml is missing, is not valid YAML, or has a wrong or unknown key.",
            "Fix site.yaml as the message says; README.md lists every key it accepts.";
        FRONT_MATTER_INVALID = "front-matter-invalid", Input, Error,
            "A page's YAML front matter is missing, malformed, or has a wrong or unknown key.",
            "Start the page with a `---` line, then `title: ...` (and optionally `weight`, `description` and `base`), then `---`.";
        IMAGE_DATA_INVALID = "image-data-invalid", Input, Error,
            "The image release data file is not valid YAML or does not follow its schema.",
            "Fix the file as the message says; README.md describes its schema.";
        KUSTOMIZATION_INVALID = "kustomization-invalid", Input, Error,
            "A base's kustomization.yaml is missing, not valid YAML, or has a field Kustomize does not know.",
            "Fix kustomization.yaml; `kubectl kustomize bases/vX.Y.Z` shows what Kustomize makes of it.";
        TEMPLATE_INVALID = "template-invalid", Input, Error,
            "A template does not parse or fails to render.",
            "Fix the template named in the message; README.md lists the variables each template receives.";
        SOURCE_DATE_INVALID = "source-date-invalid", Input, Error,
            "SOURCE_DATE_EPOCH is set but is not a whole number of seconds since 1970, so the build cannot date the sitemap reproducibly.",
            "Set SOURCE_DATE_EPOCH to a Unix timestamp (e.g. `git log -1 --format=%ct`), or unset it to leave dates out.";
        I18N_INVALID = "strings-invalid", Input, Error,
            "An interface strings file (i18n/<lang>.yaml) is not valid YAML or has an unknown key, or a language of the site lacks some of its interface strings.",
            "Give every language the strings its message names, in i18n/<lang>.yaml (the built-in src/load/i18n/en.yaml lists them all).";
        RELEASE_VERSION_UNKNOWN = "release-version-unknown", Input, Error,
            "`basepress release` names a version that has no base under bases/.",
            "Name a base folder's version (`basepress release v1.30.0`); `ls bases/` lists them.";
        OUTPUT_UNSAFE = "output-unsafe", Input, Error,
            "The output folder exists and was not written by basepress, or lies inside the input the build reads, so replacing it could destroy work.",
            "Pick another --out folder outside the input folders, or empty this one if its content is disposable.";
        CONTENT_LAYOUT = "content-layout", Check, Error,
            "The content folder has a file or folder basepress cannot place on the site.",
            "Put pages under content/<lang>/ for a language listed in site.yaml, as .md files.";
        OUTPUT_CONFLICT = "output-conflict", Check, Error,
            "Two inputs would be written to the same path on the site.",
            "Rename one of the two files named in the message.";
        BASE_VERSION_INVALID = "base-version-invalid", Check, Error,
            "A folder under bases/ is not named vX.Y.Z with a valid semantic version.",
            "Rename the folder to the release it ships with, e.g. bases/v1.30.0.";
        BASE_VERSION_DUPLICATE = "base-version-duplicate", Check, Error,
            "Two base folders name the same release.",
            "Keep one folder per release and delete the other.";
        BASE_IMAGE_RELEASE_MISSING = "base-image-release-missing", Check, Error,
            "A base has no image release of the same version in the image data.",
            "Add the release to the image data file, with what its image contains, or remove the base.";
        BASE_REFERENCE_MISSING = "base-reference-missing", Check, Error,
            "The kustomization references a file that is not in the base folder.",
            "Add the file to the base folder, or remove the reference from kustomization.yaml.";
        BASE_REFERENCE_OUTSIDE = "base-reference-outside", Check, Error,
            "The kustomization references something outside its own folder (a URL, an absolute path, `..`, a subfolder or another kustomization): installers only get the files that files.txt lists.",
            "Copy what the base needs into its folder as a plain file and reference it by file name.";
        BASE_FILE_NAME_UNSAFE = "base-file-name-unsafe", Check, Error,
            "A published file name would break the installers' shell download loop.",
            "Use only letters, digits, `.`, `_` and `-`, not starting with `.` or `-`.";
        BASE_SYMLINK = "base-symlink", Check, Error,
            "A file in a base folder is a symbolic link, whose target could change or leave the repository.",
            "Replace the link with a copy of the file.";
        BASE_UNREFERENCED_FILE = "base-unreferenced-file", Check, Warning,
            "A file in a base folder is not referenced by its kustomization, so it is not published.",
            "Reference it from kustomization.yaml if the base needs it; otherwise delete it (it may hold a secret).";
        MANIFEST_YAML_INVALID = "manifest-yaml-invalid", Input, Error,
            "A resource file of a base is not valid YAML, or an object in it lacks apiVersion, kind or metadata.name.",
            "Fix the file; `kubectl kustomize bases/vX.Y.Z` shows what Kustomize makes of it.";
        MANIFEST_UNKNOWN_FIELD = "manifest-unknown-field", Check, Error,
            "A manifest has a field that its Kubernetes API type does not have; the API server would drop or reject it.",
            "Remove the field or fix its spelling and indentation (`kubectl explain` lists the fields of a type).";
        MANIFEST_TYPE_INVALID = "manifest-type-invalid", Check, Error,
            "A manifest field has a value of the wrong type for its Kubernetes API type.",
            "Give the field a value of the type the API expects (`kubectl explain` shows it).";
        MANIFEST_KIND_UNCHECKED = "manifest-kind-unchecked", Check, Warning,
            "A manifest's kind is not one basepress knows the API type of, so its fields are not checked.",
            "Check the kind's spelling; custom resources cannot be checked and can be allowed in site.yaml `exceptions`.";
        PROBE_COMMAND_MISSING = "probe-command-missing", Check, Error,
            "An exec command (probe, lifecycle hook or container command) is not in the image of the base's version: the pod would restart in a loop.",
            "Publish this base only with an image release that has the command, or call a command the image has.";
        COMMAND_ARGS_INVALID = "command-args-invalid", Check, Error,
            "An exec command is called with arguments the image's command does not accept.",
            "Call the command with one of the argument lists the image data gives for it.";
        LIVENESS_USES_READINESS = "liveness-uses-readiness", Check, Error,
            "The liveness probe runs a readiness check: when the network drops, Kubernetes restarts an agent that would have reconnected by itself.",
            "Use the liveness check (e.g. `whystack-health live`) for livenessProbe and keep the readiness check for readinessProbe.";
        PROBE_NEEDS_PORT = "probe-needs-port", Check, Error,
            "An httpGet, tcpSocket or grpc probe on a container whose image listens on no port: the probe always fails.",
            "Use an exec probe with the image's health command.";
        TERMINATION_GRACE_TOO_SHORT = "termination-grace-too-short", Check, Error,
            "terminationGracePeriodSeconds is not longer than the image's drain timeout, so SIGKILL arrives in the middle of the drain.",
            "Set terminationGracePeriodSeconds above the drain timeout, with headroom (150 for the default 120 s drain).";
        HEALTH_DIR_NOT_WRITABLE = "health-dir-not-writable", Check, Error,
            "readOnlyRootFilesystem is on, and no writable volume is mounted at the health directory or a parent of it: the health probes always fail.",
            "Mount an emptyDir at /tmp (or at the health directory), or point the health directory at a writable volume.";
        SECURITY_USER_MISMATCH = "security-user-mismatch", Check, Error,
            "runAsUser, runAsGroup or fsGroup differ from the image's user, which then cannot write its own files.",
            "Use the image's uid and gid (from the image data), or leave the field out.";
        RUN_AS_NON_ROOT_MISSING = "run-as-non-root-missing", Check, Error,
            "A container of the pod (init containers too) does not run with runAsNonRoot: true, set on the pod or on the container (whose own value wins), which the restricted Pod Security profile requires.",
            "Set securityContext.runAsNonRoot: true on the pod, and remove any container's runAsNonRoot: false.";
        POD_SECURITY_REFUSED = "pod-security-refused", Check, Error,
            "A workload runs in a namespace of the build that enforces a Pod Security level (`pod-security.kubernetes.io/enforce: baseline` or `restricted`), and its pod template breaks that level: admission refuses every pod, so the install applies and nothing runs.",
            "Change the pod template to meet the level (restricted: allowPrivilegeEscalation: false, capabilities.drop: [ALL], seccompProfile RuntimeDefault, runAsNonRoot: true, no host namespaces, ports or paths), or run the workload in another namespace.";
        SELECTOR_MATCHES_NOTHING = "selector-matches-nothing", Check, Warning,
            "A Service, NetworkPolicy or PodDisruptionBudget of a build selects pods by labels that no workload of the build in its namespace gives its pods: it sends traffic to, applies to or protects nothing the base installs.",
            "Use the labels of the pods it is meant for (the pod template's `metadata.labels`), or remove it.";
        REPLICAS_NOT_ONE = "replicas-not-one", Check, Error,
            "The agent's workload has more than one replica: the bootstrap token is single use, so the second pod fails to enroll.",
            "Keep replicas: 1; run N agents as N installs, each with its own namespace, Secret and token.";
        ENV_KEY_UNKNOWN = "env-key-unknown", Check, Error,
            "An environment key is not one the image of this version reads: its setting has no effect and the default applies.",
            "Fix the key's spelling, or remove it; the image data lists the keys each release reads.";
        ENV_VALUE_INVALID = "env-value-invalid", Check, Error,
            "An environment value is not one the image accepts for its key.",
            "Use one of the values the image data lists for the key.";
        ENV_REQUIREMENT_MISSING = "env-requirement-missing", Check, Error,
            "An environment value needs another setting or a volume that the base does not provide: the agent fails at boot.",
            "Provide what the value requires, as the message says, or pick another value.";
        ENV_VALUE_NOT_IMPLEMENTED = "env-value-not-implemented", Check, Error,
            "An environment value passes the image's config validation but is not implemented: the agent fails at boot.",
            "Use an implemented value (for EKS attestation, `aws-sts`).";
        LEARNED_STORE_ON_IDENTITY = "learned-store-on-identity-volume", Check, Error,
            "The learned-store cache points into the identity volume, which must hold only the agent's identity.",
            "Leave the learned-store path at its default (`:memory:`).";
        IMAGE_NOT_BARE = "image-not-bare", Check, Error,
            "A container image carries a registry, tag or digest: a base names the bare image and the installer's overlay pins it.",
            "Write the bare image name (e.g. `whystack-agent`); overlays set `images:` with newName and digest.";
        IMAGE_PIN_MISMATCH = "image-pin-mismatch", Check, Error,
            "A container of the product's image pins a tag or digest that is not the image of the release whose base it runs on (another release, a tag with a `v`, a tag that is no release, a digest of another image), so the checks of that release do not hold for what runs.",
            "Pin the release the base is for: `newTag` without a `v` (in a page, `newTag: {{ version }}`), or its digest.";
        STORAGE_CLASS_SET = "storage-class-set", Check, Error,
            "A volume claim names a StorageClass, which differs from cluster to cluster.",
            "Remove storageClassName; the cluster default applies, and an overlay can patch it in.";
        SECRET_IN_BASE = "secret-in-base", Check, Error,
            "The base carries a credential: a Secret with data, a secretGenerator, or a value for a secret environment key. Everyone who downloads the base gets it.",
            "Remove the value; installers create the Secret from their own env file.";
        DOC_VARIABLE_UNKNOWN = "doc-variable-unknown", Check, Error,
            "A page uses a `{{ variable }}` that does not exist, or a template tag.",
            "Use one of the variables README.md lists (e.g. `{{ latest }}`, `{{ image.name }}`); write a literal `{{` as `{{ \"{{\" }}`.";
        DOC_BASE_UNKNOWN = "doc-base-unknown", Check, Error,
            "A page's front matter `base` names a version that has no published base.",
            "Point `base` at a folder under bases/ (e.g. `base: v1.30.0`), or leave it out to document the latest.";
        START_PAGE_MISSING = "start-page-missing", Check, Error,
            "A published docs version has no start page (`index.md`) in the default language, where the site's root and the links to the version lead.",
            "Add `index.md` to the default language's folder of that version.";
        DOC_COMMAND_MISMATCH = "doc-command-mismatch", Check, Error,
            "A kubectl command in a page names an object of the base it documents in another namespace (or in none), by a name the base does not give it, or with a container its pod does not have: run as written, it answers `not found`. Or a signature check (`ssh-keygen -Y verify`) passes another identity or namespace than site.yaml's `signing`.",
            "Name the base's namespace with `-n`, and its objects and containers as the base names them; pass the signature check the identity and namespace of `signing`.";
        DOC_YAML_INVALID = "doc-yaml-invalid", Check, Error,
            "A fenced yaml block in a page does not parse.",
            "Fix the YAML: readers copy it as it is.";
        DOC_OVERLAY_INVALID = "doc-overlay-invalid", Check, Error,
            "The overlay a page shows (its `file=` blocks) cannot be built on the base: no `file=kustomization.yaml` block, two blocks for one file, `resources` that does not name the base, or a documented release with no published base to build it on.",
            "Show every file the overlay's kustomization.yaml names as a `file=NAME` block on the same page, with `resources: [base]`.";
        DOC_PATCH_UNKNOWN_NAME = "doc-patch-unknown-name", Check, Error,
            "A strategic-merge patch, or a YAML example that shows an object of the base, names a container or volume the base does not have: instead of changing it, the patch (or an overlay made from the example) silently adds a broken one.",
            "Use the name the base gives it (containers match by name: the agent's is `agent`).";
        DOC_IMAGE_UNKNOWN = "doc-image-unknown", Check, Error,
            "An overlay's `images:` entry names an image the base does not use, so the real image is never replaced.",
            "Name the image as the base does (the bare image name, e.g. `whystack-agent`).";
        DOC_VERSION_MISMATCH = "doc-version-mismatch", Check, Warning,
            "A page pins a release other than the one it documents, where a reader copies it: a base folder of the site (`/kubernetes/v1.29.0/`) or the image with a tag (`whystack-agent:1.29.0`), or a version that is no release at all.",
            "Write `{{ version }}`, which is the release the page documents.";
        DOC_ENV_KEY_UNKNOWN = "doc-env-key-unknown", Check, Error,
            "A page mentions an environment key that the image release it documents does not read.",
            "Fix the key's spelling, or document the release that reads it (front matter `base`).";
        TRANSLATION_MISSING = "translation-missing", Check, Warning,
            "A page of the default language has no translation: readers get the default-language page with a notice.",
            "Translate the page, or set `translations: required` in site.yaml to make this an error.";
        LOCK_INVALID = "lock-invalid", Input, Error,
            "bases/published.lock has a line that is not `vX.Y.Z FILE SHA256`.",
            "Restore the file from version control; `basepress release` is the only writer it needs.";
        RELEASED_VERSION_CHANGED = "released-version-changed", Check, Error,
            "A released version's files changed, were added or were removed since its release; installers pin released versions.",
            "Put the released files back as they were, and publish the change as a new version.";
        RELEASED_VERSION_MISSING = "released-version-missing", Check, Error,
            "A released version is no longer published (its base folder is gone, or a deployed site has a version this build lacks).",
            "Restore the base folder: a released version never disappears while installers may pin it.";
        VERSION_UNRELEASED = "version-unreleased", Check, Warning,
            "A base is published but not in bases/published.lock yet, so nothing stops its files from changing.",
            "Run `basepress release vX.Y.Z` once the version is final.";
        CREDENTIAL_LEAK = "credential-leak", Check, Error,
            "Something that looks like a real credential (an AWS key, a private key, a token value) is in a published file or page.",
            "Remove it and rotate it if it was ever real; docs show placeholders such as `<token>`.";
        INPUT_SYMLINK = "input-symlink", Check, Error,
            "An input file is a symbolic link, which can point outside the project.",
            "Replace the link with a copy of the file.";
        INPUT_TOO_LARGE = "input-too-large", Input, Error,
            "An input file is larger than basepress accepts (4 MiB for any input).",
            "Split the file; a docs page or a base file that large is almost surely a mistake.";
        LINK_BROKEN = "link-broken", Check, Error,
            "A link in a page points to a page or file that the site does not have.",
            "Point the link at an existing page (by its .md source path or its URL) or published file.";
        LINK_REFERENCE_UNDEFINED = "link-reference-undefined", Check, Warning,
            "A reference link (`[text][label]` or `[text][]`) names a label that no definition in its page gives: Markdown publishes it as plain text, brackets and all.",
            "Define the label on a line of its own (`[label]: install.md`) in the same page, or write the link inline.";
        ANCHOR_MISSING = "anchor-missing", Check, Error,
            "A link names an anchor that the target page has no heading for.",
            "Use the id of an existing heading: `basepress check` prints the ones the page has.";
        HEADING_ID_REPEATED = "heading-id-repeated", Check, Error,
            "A heading's explicit id (`{#id}`) is taken already, by an earlier heading, an element of the default templates, raw HTML or a footnote: the page has two elements with one id, and every link to it lands on the first.",
            "Give each heading its own id, or remove the `{#id}` of one and let it have the id its text gives.";
        LINK_OTHER_VERSION = "link-other-version", Check, Error,
            "A page links to a page (by its .md source) that its own docs version does not have: only other versions do, so the link goes nowhere in this version's docs.",
            "Link to a page this version has, write the page for this version, or link to the other version's published URL on purpose.";
        VERSION_PAGE_REMOVED = "version-page-removed", Check, Warning,
            "A page of the latest docs version is missing from next: once next is released, its stable URL (/<lang>/…) answers 404 to bookmarks, links from other sites and search engines.",
            "Keep a page at that path in content/ (it may say where the topic went), or accept that its URL goes away.";
        DOCS_VERSION_MISSING = "docs-version-missing", Check, Error,
            "A docs version recorded in versions/versions.lock has no folder any more: its published URLs would disappear.",
            "Restore versions/<line>/ from version control: readers and search engines link to a released version's pages.";
        DOCS_VERSION_UNRELEASED = "docs-version-unreleased", Check, Warning,
            "A folder under versions/ is not recorded in versions/versions.lock, so nothing keeps its URLs published.",
            "Freeze docs versions with `basepress release vX.Y.Z`, which records them.";
        INPUT_NOT_A_FILE = "input-not-a-file", Input, Error,
            "An input is a FIFO, a socket, a device or a folder where a regular file is expected: reading it could block the build or never end.",
            "Replace it with a regular file, or move it out of the project.";
        NAME_CASE_CONFLICT = "name-case-conflict", Check, Error,
            "Two files or folders differ only in case (`Install.md` and `install.md`): a disk that ignores case (macOS, Windows, many hosts) keeps only one of them.",
            "Rename one of the two so that their names differ in more than case.";
        TEMPLATE_RECURSION = "template-recursion", Input, Error,
            "Templates include, extend or import one another in a circle, or a macro calls itself (or another that calls it back) without descending into its argument: rendering would never end.",
            "Break the circle the message names; a macro may call itself only on a part of its argument, as in `{% for item in items %}{{ self::nav(items=item.children) }}{% endfor %}`.";
        RENDER_TIMEOUT = "render-timeout", Input, Error,
            "A template render ran longer than the run allows (`--render-timeout`, 30 s unless set): a loop or a macro of the templates does too much work, which the template engine would run to its end, however long.",
            "Look in the template the message names for loops nested over the site's data or a macro that calls itself more than once per item; for a page that really needs longer, pass `--render-timeout SECONDS`.";
        SCRIPT_WRITE_READ_ONLY = "script-write-read-only", Check, Error,
            "A script a container runs writes to a file (`> FILE`) on a read-only file system (the root with `readOnlyRootFilesystem: true`, a ConfigMap or Secret volume, a `readOnly` mount): the write fails, and the command with it (a probe that always fails, a hook that stops).",
            "Write below a writable volume (an emptyDir mounted at /tmp), or to /dev/null or /dev/stderr.";
        WORKING_DIR_INVALID = "working-dir-invalid", Check, Error,
            "A container's `workingDir` is not an absolute path: the container runtime refuses to create the container (the OCI runtime spec requires an absolute working folder), so the pod never starts.",
            "Write the working folder from the root (`workingDir: /app`).";
        DOC_TRANSLATION_CODE_DIFFERS = "doc-translation-code-differs", Check, Warning,
            "A translated page shows other code than its original in the default language (a line more or less, another value, another block): readers of one language get other steps. Comments and `<placeholders>` may differ.",
            "Show the same code as the original, translating only its comments and `<placeholders>`, or change both pages.";
        RENDER_MEMORY = "render-memory", Input, Error,
            "A template render made the run hold more memory than it allows (`--render-memory`, 4096 MiB unless set): a template builds a value that grows without bound, such as a string doubled in a loop, which would exhaust the machine's memory.",
            "Look in the template the message names for a value built from itself in a loop (`set_global s = s ~ s`); for a site that really needs more, pass `--render-memory MIB`.";
        TEMPLATE_UNUSED = "template-unused", Check, Warning,
            "A file in templates/ is used by no page: it overrides no default template, and no template that basepress renders extends, includes or imports it, so it changes nothing.",
            "Name the file after the default it overrides (`templates/page.html`, `templates/partials/footer.html`), or include it from a template that is used.";
        TEMPLATE_CONTENT_UNRENDERED = "template-content-unrendered", Check, Warning,
            "A template that extends another has content the engine never renders: a block its parent does not have, or text or tags outside its blocks.",
            "Fill a block the parent has (README.md lists the blocks of base.html), and keep everything of the template inside its blocks.";
        TEMPLATE_HTML_ESCAPED = "template-html-escaped", Check, Warning,
            "A template prints HTML that basepress made (`page.content`, `nav_html`, an `_html` value) without `| safe`, so readers see its tags as text.",
            "Print it with `| safe`, as the default templates do: basepress escaped what the HTML holds when it made it.";
        SIGNING_KEY_INVALID = "signing-key-invalid", Input, Error,
            "The private signing key is needed and missing, cannot be read, is encrypted, is not an ed25519 key, or is not the key that site.yaml's `signing.public_key` names.",
            "Pass the release key with --signing-key FILE or BASEPRESS_SIGNING_KEY (an unencrypted OpenSSH ed25519 key matching `signing.public_key`).";
        SIGNATURE_MISSING = "signature-missing", Check, Error,
            "A released version has no stored signature in bases/signatures/, or one that bases/published.lock does not record, or its released signature is no longer published.",
            "Sign the version once with `basepress release vX.Y.Z --signing-key FILE`, or restore its signature from version control.";
        SIGNATURE_INVALID = "signature-invalid", Check, Error,
            "A stored signature is not a valid SSH signature of its version's SHA256SUMS, by site.yaml's key, in the version's namespace, or differs from the one released.",
            "Restore bases/signatures/vX.Y.Z.sig from version control: a released signature never changes.";
        VERSION_UNSIGNED = "version-unsigned", Check, Warning,
            "A version is published without a signature (it is not released, and no signing key was given), so installers who verify signatures refuse it, and so do `basepress verify` and `deploy`.",
            "Build with --signing-key FILE (or BASEPRESS_SIGNING_KEY), or release the version with `basepress release`.";
        SITE_UNREACHABLE = "site-unreachable", Input, Error,
            "The site to verify cannot be read: the URL does not answer, answers with an error or too much, or the folder does not exist.",
            "Pass the site's root (the URL or folder that holds kubernetes/) and check that it is served.";
        PUBLISHED_FILE_MISSING = "published-file-missing", Check, Error,
            "A file that a published version's index names (versions.txt, files.txt, SHA256SUMS) cannot be downloaded.",
            "Deploy the site again in full: `basepress build` writes every file its indexes name.";
        PUBLISHED_FILE_UNLISTED = "published-file-unlisted", Check, Error,
            "A built site's folder holds a version folder that versions.txt does not list, or a base folder holds a file that its files.txt does not list: installers never download it, and verify does not check it.",
            "Publish the folder a build wrote as it is: remove what was added by hand, or add it to the project and build again.";
        PUBLISHED_CHECKSUM_MISMATCH = "published-checksum-mismatch", Check, Error,
            "A published file differs from the SHA-256 that SHA256SUMS gives it, SHA256SUMS is malformed, or files.txt and SHA256SUMS do not name the same files.",
            "Deploy the released files again, byte for byte; never edit a published base in place.";
        PUBLISHED_SIGNATURE_INVALID = "published-signature-invalid", Check, Error,
            "A published version's signature is missing, malformed, or does not verify for its SHA256SUMS against the allowed_signers file in the version's namespace.",
            "Publish the signature stored at release (bases/signatures/vX.Y.Z.sig) with the SHA256SUMS it signs.";
        IMAGE_SOURCE_INVALID = "image-source-invalid", Input, Error,
            "An image source is not one basepress can read: it must be `oci:DIR[:TAG]`, `docker-archive:FILE[:TAG]`, `registry://HOST[:PORT]/REPO[:TAG]` or `docker://HOST/REPO[:TAG]`.",
            "Write the source the way skopeo names its transports, e.g. `oci:images/whystack-agent:1.29.0`.";
        IMAGE_UNAVAILABLE = "image-unavailable", Input, Error,
            "An image cannot be had: the folder or archive is missing, the tag is not in it, or the registry refused the credentials (401), does not have the image (404), failed (5xx) or did not answer in time.",
            "Check the source and the tag; for a registry, its address and credentials (a Docker config.json, or a bearer token).";
        IMAGE_CORRUPT = "image-corrupt", Input, Error,
            "An image's bytes are wrong: a blob that does not match its digest, JSON that does not parse, a truncated or corrupt layer, a malformed whiteout, or a tar entry that climbs out of the root.",
            "Build or copy the image again (skopeo copy verifies every digest); never edit its blobs by hand.";
        IMAGE_UNSUPPORTED = "image-unsupported", Input, Error,
            "An image uses a media type or format that basepress does not read: it reads OCI and Docker v2 manifests, indexes and configs, and tar layers plain, gzip or zstd.",
            "Convert the image, e.g. `skopeo copy --format oci SOURCE oci:DIR:TAG`.";
        IMAGE_TOO_LARGE = "image-too-large", Input, Error,
            "An image crosses a bound on what basepress reads (uncompressed bytes, tar entries, compression ratio, layers, platforms): a decompression bomb, or not the image meant.",
            "Check that the source names the right image; a layer that expands that much is almost surely hostile.";
        IMAGE_SYMLINK_LOOP = "image-symlink-loop", Input, Error,
            "A path in the image goes through symbolic links that loop, or through more than 40 of them, so the kernel refuses it (ELOOP).",
            "Fix the links in the image so that every path resolves in a few hops.";
        KUSTOMIZE_FILE_MISSING = "kustomize-file-missing", Check, Error,
            "A kustomization names a file or folder that does not exist (or lies outside its folder), so `kubectl kustomize` fails.",
            "Add the file, or fix the name in the kustomization; files must be in or below the kustomization's folder.";
        KUSTOMIZE_DUPLICATE_RESOURCE = "kustomize-duplicate-resource", Check, Error,
            "Two resources of a build have the same kind, name and namespace, which Kustomize refuses.",
            "Remove one of the two, or list the file or folder only once in `resources`.";
        KUSTOMIZE_PATCH_NO_TARGET = "kustomize-patch-no-target", Check, Error,
            "A patch without `target` names a kind and name (and namespace) that no resource of the build has, which Kustomize refuses.",
            "Give the patch the apiVersion, kind and metadata.name of a resource of the build, or add a `target`.";
        KUSTOMIZE_PATCH_TARGET_UNMATCHED = "kustomize-patch-target-unmatched", Check, Error,
            "A patch's `target` selects no resource. Kustomize silently ignores such a patch; basepress refuses it, since it changes nothing.",
            "Fix the selector (group, version, kind, name and namespace are anchored regular expressions) or remove the patch.";
        KUSTOMIZE_PATCH_INVALID = "kustomize-patch-invalid", Check, Error,
            "A patch cannot be read or applied: not a strategic merge patch nor a JSON 6902 list of operations, a value of the wrong type, an operation on a path that does not exist.",
            "Fix the patch as the message says; `kubectl kustomize` shows the same failure.";
        KUSTOMIZE_GENERATOR_INVALID = "kustomize-generator-invalid", Check, Error,
            "A configMapGenerator or secretGenerator entry is wrong: no name, a literal without `=`, a malformed `files` entry, a repeated key.",
            "Fix the generator entry as the message says.";
        KUSTOMIZE_GENERATOR_BASE_MISSING = "kustomize-generator-base-missing", Check, Error,
            "A generator with `behavior: merge` or `replace` has no generated resource of the same name to merge into, or one with `create` collides with an existing one.",
            "Use the name (and namespace) of a generator of the base, or `behavior: create` for a new one.";
        KUSTOMIZE_REPLICAS_NO_TARGET = "kustomize-replicas-no-target", Check, Error,
            "A `replicas` entry names no Deployment, ReplicaSet, ReplicationController or StatefulSet of the build, which Kustomize refuses.",
            "Use the name of a workload of the build.";
        KUSTOMIZE_UNSUPPORTED = "kustomize-unsupported", Check, Error,
            "A kustomization uses a feature basepress does not build (Helm charts, vars, plugins, remote resources), so its result cannot be checked.",
            "Build the base with the fields basepress supports (README.md lists them), or move the feature to the installer's overlay.";
        KUSTOMIZE_BUILD_INVALID = "kustomize-build-invalid", Check, Error,
            "Kustomize would refuse this build for another reason: an invalid selector or regular expression, a field that is not of the expected type, an ambiguous name reference.",
            "Fix the kustomization as the message says; `kubectl kustomize` shows the same failure.";
        KUSTOMIZE_GENERATOR_KEY_INVALID = "kustomize-generator-key-invalid", Check, Error,
            "A generated ConfigMap or Secret has a key that is not a valid environment variable name or data key. Kustomize builds it; basepress refuses it, since the API server rejects the object.",
            "Use letters, digits, `-`, `_` and `.` in keys (env file keys must not start with a digit).";
        SHELL_SCRIPT_DYNAMIC = "shell-script-dynamic", Check, Warning,
            "A container runs a shell script (`sh -c`) with a command basepress cannot name before it runs (a command name from a variable or a substitution, `eval`, a sourced file, a script file given to the shell, `env -S`, a script that does not parse), so that command is not checked against the image.",
            "Write the command out in the script (`exec whystack-health live`), or call it directly without a shell.";
        MANIFEST_REQUIRED_FIELD_MISSING = "manifest-required-field-missing", Check, Error,
            "A built object lacks a field the API server requires: a required property of its Kubernetes OpenAPI schema, or one the API's validation requires (a container in a pod, an access mode and a storage request in a volume claim), so `kubectl apply` fails.",
            "Add the field, or fix the patch that removed it.";
        CONFIGMAP_REFERENCE_MISSING = "configmap-reference-missing", Check, Error,
            "A container or a volume refers to a ConfigMap, or a key of one, that the build does not have, without `optional: true`: the kubelet does not start the pod (CreateContainerConfigError, or ContainerCreating for a volume).",
            "Add the ConfigMap or the key (a configMapGenerator of the base or the overlay), fix the name, or mark the reference `optional: true`.";
        MANIFEST_VALUE_INVALID = "manifest-value-invalid", Check, Error,
            "A built object has a value the API server's validation refuses though its type is right: a container mounts a volume its pod does not have, or two containers, volumes or ports of one container share a name.",
            "Add the volume to the pod (or the claim template), or fix the mount's name; give each container, volume and port a name of its own.";
        IMAGE_DATA_MISMATCH = "image-data-mismatch", Check, Error,
            "The image release data says something of a release that its image contradicts: a command the image does not have, another user, a port it does not say, another environment default.",
            "Correct the image data for that release (`basepress image inspect SOURCE:TAG` shows what the image has), or point the image source at the right image.";
        IMAGE_USER_REFUSED = "image-user-refused", Check, Error,
            "The kubelet or the runtime refuses to start a container of the image as its user: the image names a user or group its /etc/passwd or /etc/group lacks, or runAsNonRoot is set without runAsUser and the image's user is a name (which the kubelet cannot verify) or root.",
            "Set runAsUser (and runAsGroup) to the image user's numeric ids, or fix the image's USER.";
        IMAGE_VERSION_MISMATCH = "image-version-mismatch", Check, Error,
            "The image read for a base has an `org.opencontainers.image.version` label that is not the base's version, so it is not the image of that release.",
            "Point the image source at the release's own image, or fix the label where the image is built.";
        DEPLOY_TARGET_INVALID = "deploy-target-invalid", Input, Error,
            "The deploy target is not `s3://BUCKET[/PREFIX]`, `gs://BUCKET[/PREFIX]` or `az://CONTAINER[/PREFIX]` with a valid bucket name and a prefix of plain path segments.",
            "Name the bucket and the folder in it, e.g. `basepress deploy s3://docs-bucket/site`.";
        STORE_CONFIG_INVALID = "store-config-invalid", Input, Error,
            "The object store cannot be configured: a profile that does not exist or gets its credentials in a way basepress does not run, an endpoint that is not a URL, or plain HTTP to an endpoint that is not on loopback.",
            "Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE naming a profile with keys), AWS_REGION, and an https:// AWS_ENDPOINT_URL for an S3-compatible server.";
        STORE_UNREACHABLE = "store-unreachable", Input, Error,
            "The object store did not answer, or refused a request: wrong credentials, no permission, a missing bucket, server errors or timeouts after retries.",
            "Check the endpoint, the bucket and the permissions (list, get, put, delete), then deploy again: the next deploy completes one that stopped midway.";
        DEPLOY_SITE_INVALID = "deploy-site-invalid", Input, Error,
            "The folder to deploy is not a site that `basepress build` wrote: it is missing, has no kubernetes/versions.txt, holds a symbolic link, a special file, a name that is not UTF-8 or a file too large to upload, or changed during the deploy.",
            "Run `basepress build` and deploy its output (`--site DIR`, by default ROOT/site).";
        DEPLOY_CONFLICT = "deploy-conflict", Check, Error,
            "Another deploy changed the bucket while this one ran: an index it was replacing changed, or an object of a version it was creating appeared with other bytes.",
            "Deploy again once the other deploy has finished: the next one starts from what the bucket holds then.";
        DEPLOY_TOO_MANY_DELETES = "deploy-too-many-deletes", Check, Error,
            "The deploy would delete more objects than --max-deletes allows, which usually means the wrong site or the wrong prefix.",
            "Look at the plan with --dry-run; if the deletions are meant, raise --max-deletes.";
        INIT_INVALID = "init-invalid", Input, Error,
            "`basepress init` was given a folder that is not empty (or is a file), a language list it cannot use, or could not write the project.",
            "Name a new or empty folder (`basepress init my-docs`) and languages as codes separated by commas (`--languages es,pt,en`).";
        NEW_RELEASE_INVALID = "new-release-invalid", Input, Error,
            "`basepress new-release` names a version that is not vX.Y.Z or already has a base, the project has no base to start from, or the image data's `releases` list cannot be edited.",
            "Name a version that has no folder under bases/ yet (`basepress new-release v1.31.0`); `ls bases/` lists the ones there are.";
    }

    /// Looks a rule up by its id.
    pub fn by_id(id: &str) -> Option<&'static Rule> {
        ALL.iter().copied().find(|r| r.id == id)
    }
}

/// The name closest to `name` among `known`, to suggest for a typo; `None`
/// when none is close enough to be one.
pub fn closest<'a>(name: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    known
        // A swap of two neighbours (`agnet`) is one edit.
        .map(|k| (strsim::osa_distance(name, k), k))
        // A third of the longer name may differ: `tittle` is `title`,
        // `date` is not `base`.
        .filter(|(d, k)| *d <= (name.chars().count().max(k.chars().count()) / 3).max(1))
        .min()
        .map(|(_, k)| k)
}

/// Where a finding is: a file relative to the project root, and a 1-based
/// line and column when known.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Location {
    /// Written lossily into JSON when it is not UTF-8.
    #[serde(serialize_with = "lossy_path")]
    pub file: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

impl Location {
    pub fn file(file: impl Into<PathBuf>) -> Self {
        Location {
            file: file.into(),
            line: None,
            column: None,
        }
    }

    pub fn at(file: impl Into<PathBuf>, line: usize, column: usize) -> Self {
        Location {
            file: file.into(),
            line: Some(line),
            column: Some(column),
        }
    }

    pub fn line(file: impl Into<PathBuf>, line: usize) -> Self {
        Location {
            file: file.into(),
            line: Some(line),
            column: None,
        }
    }
}

/// One finding.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub rule: &'static Rule,
    pub severity: Severity,
    pub message: String,
    pub location: Option<Location>,
    /// A remedy specific to this finding; the rule's own remedy otherwise.
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn new(rule: &'static Rule, message: impl Into<String>) -> Self {
        Diagnostic {
            rule,
            severity: rule.severity,
            message: message.into(),
            location: None,
            help: None,
        }
    }

    pub fn at(mut self, location: Location) -> Self {
        self.location = Some(location);
        self
    }

    pub fn in_file(self, file: impl Into<PathBuf>) -> Self {
        self.at(Location::file(file))
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    pub fn remedy(&self) -> &str {
        self.help.as_deref().unwrap_or(self.rule.remedy)
    }

    fn sort_key(&self) -> (Option<&Location>, &'static str, &str) {
        (self.location.as_ref(), self.rule.id, &self.message)
    }
}

/// Puts findings in a stable order: by file, line, column, then rule.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
}

/// Drops repeated findings (same rule, place and message), which appear
/// when two containers share one source of settings. Expects sorted input.
pub fn dedup(diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.dedup_by(|a, b| a.sort_key() == b.sort_key());
}

/// How many findings of one rule one file shows; the rest are counted in
/// one more finding. A hostile page (200,000 broken links) would
/// otherwise make a report fifty times its size.
pub const MAX_PER_FILE_AND_RULE: usize = 100;

/// Keeps the first [`MAX_PER_FILE_AND_RULE`] findings of each rule in each
/// file, and says how many more there are in one finding of that rule
/// after them. Expects sorted input, and keeps it sorted; bounding a
/// bounded list changes nothing.
pub fn bound(diagnostics: &mut Vec<Diagnostic>) {
    use std::collections::HashMap;
    let keys: Vec<Option<(&std::path::Path, &'static str)>> = diagnostics
        .iter()
        .map(|d| d.location.as_ref().map(|l| (l.file.as_path(), d.rule.id)))
        .collect();
    let mut counts: HashMap<_, usize> = HashMap::new();
    for key in keys.iter().flatten() {
        *counts.entry(*key).or_default() += 1;
    }
    // One more is shown rather than counted; and so a bounded list (the
    // findings shown and the count) is left as it is.
    let over_bound = |n: usize| n > MAX_PER_FILE_AND_RULE + 1;
    if !counts.values().any(|&n| over_bound(n)) {
        return;
    }
    // Each finding's fate: dropped (None), kept (Some(0)), or kept and
    // followed by the count of those left out (Some(more)).
    let mut seen: HashMap<_, usize> = HashMap::new();
    let fates: Vec<Option<usize>> = keys
        .iter()
        .map(|key| {
            let Some(key) = key.filter(|k| over_bound(counts[k])) else {
                return Some(0);
            };
            let n = seen.entry(key).or_default();
            *n += 1;
            match (*n).cmp(&MAX_PER_FILE_AND_RULE) {
                std::cmp::Ordering::Less => Some(0),
                std::cmp::Ordering::Equal => Some(counts[&key] - MAX_PER_FILE_AND_RULE),
                std::cmp::Ordering::Greater => None,
            }
        })
        .collect();
    let all = std::mem::take(diagnostics);
    for (d, fate) in all.into_iter().zip(fates) {
        match fate {
            None => {}
            Some(0) => diagnostics.push(d),
            Some(more) => {
                // The last one shown, then what is left.
                let summary = Diagnostic {
                    rule: d.rule,
                    severity: d.severity,
                    message: format!(
                        "… and {more} more `{}` findings in this file, not shown: fix the ones above and check again",
                        d.rule.id
                    ),
                    location: d.location.clone(),
                    help: None,
                };
                diagnostics.push(d);
                diagnostics.push(summary);
            }
        }
    }
}

/// The exit code a list of findings calls for: 0 without errors, 2 when an
/// input could not be read, 1 when checks found errors.
pub fn exit_code(diagnostics: &[Diagnostic]) -> u8 {
    let errors = diagnostics.iter().filter(|d| d.is_error());
    let mut code = 0;
    for d in errors {
        match d.rule.class {
            Class::Input => return 2,
            Class::Check => code = 1,
        }
    }
    code
}

/// A path as JSON text: bytes that are not UTF-8 become U+FFFD.
fn lossy_path<S: serde::Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
}

#[cfg(test)]
mod tests {
    #[test]
    fn findings_of_a_rule_in_a_file_are_bounded_once() {
        use super::*;
        let many = |file: &str, n: usize, r: &'static Rule| -> Vec<Diagnostic> {
            (1..=n)
                .map(|i| Diagnostic::new(r, format!("finding {i:06}")).at(Location::at(file, i, 1)))
                .collect()
        };
        let mut all = many("a.md", 250, rule::LINK_BROKEN);
        all.extend(many("a.md", 3, rule::DOC_VARIABLE_UNKNOWN));
        all.extend(many("b.md", MAX_PER_FILE_AND_RULE + 1, rule::LINK_BROKEN));
        sort(&mut all);
        bound(&mut all);
        let in_file = |f: &str, r: &Rule| {
            all.iter()
                .filter(|d| {
                    d.rule.id == r.id
                        && d.location
                            .as_ref()
                            .is_some_and(|l| l.file == std::path::Path::new(f))
                })
                .count()
        };
        assert_eq!(
            in_file("a.md", rule::LINK_BROKEN),
            MAX_PER_FILE_AND_RULE + 1
        );
        assert_eq!(in_file("a.md", rule::DOC_VARIABLE_UNKNOWN), 3);
        assert_eq!(
            in_file("b.md", rule::LINK_BROKEN),
            MAX_PER_FILE_AND_RULE + 1
        );
        let summary = all
            .iter()
            .find(|d| d.message.starts_with('…'))
            .expect("a summary");
        assert!(
            summary.message.contains("150 more `link-broken`"),
            "{}",
            summary.message
        );
        assert_eq!(
            summary.location.as_ref().and_then(|l| l.line),
            Some(MAX_PER_FILE_AND_RULE)
        );
        let mut sorted = all.clone();
        sort(&mut sorted);
        assert_eq!(
            sorted.iter().map(|d| &d.message).collect::<Vec<_>>(),
            all.iter().map(|d| &d.message).collect::<Vec<_>>()
        );
        let before = all.len();
        bound(&mut all);
        assert_eq!(all.len(), before);
    }

    use super::*;

    #[test]
    fn rule_ids_are_unique_and_kebab_case() {
        let mut ids: Vec<_> = rule::ALL.iter().map(|r| r.id).collect();
        for id in &ids {
            assert!(
                id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{id}"
            );
        }
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(n, ids.len(), "duplicate rule id");
    }

    #[test]
    fn closest_suggests_typos_only() {
        let keys = [
            "RUNNER_SECRET_STORE_MODE",
            "RUNNER_HEALTH_DIR",
            "AWS_REGION",
        ];
        assert_eq!(
            closest("RUNNER_SECRET_STORE_MOD", keys.into_iter()),
            Some("RUNNER_SECRET_STORE_MODE")
        );
        assert_eq!(closest("SOMETHING_ELSE", keys.into_iter()), None);
    }

    #[test]
    fn input_errors_win_over_check_errors() {
        let check = Diagnostic::new(rule::LINK_BROKEN, "x");
        let input = Diagnostic::new(rule::CONFIG_INVALID, "y");
        let warn = Diagnostic::new(rule::BASE_UNREFERENCED_FILE, "z");
        assert_eq!(exit_code(std::slice::from_ref(&warn)), 0);
        assert_eq!(exit_code(&[warn.clone(), check.clone()]), 1);
        assert_eq!(exit_code(&[check, input, warn]), 2);
    }
}
