//! The scanner against its own rules' examples, and against a corpus of
//! leaks and look-alikes.
//!
//! Every credential here is synthetic: drawn at test time from a seeded
//! generator, in the shape of the real thing, so that no token-shaped
//! string is written in the repository (hosts that scan pushes for
//! credentials would refuse it, and rightly).

use super::*;

const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const B32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const HEX: &[u8] = b"0123456789abcdef";
const LOWER_DIGITS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// A deterministic generator of fake secrets.
struct Fake(u64);

impl Fake {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// `n` characters drawn from `alphabet`.
    fn s(&mut self, alphabet: &[u8], n: usize) -> String {
        (0..n)
            .map(|_| alphabet[(self.next() % alphabet.len() as u64) as usize] as char)
            .collect()
    }

    /// Base64 lines of a fake key body.
    fn pem_body(&mut self, lines: usize) -> String {
        (0..lines).map(|_| self.s(B64, 64) + "\n").collect()
    }

    fn pem(&mut self, kind: &str) -> String {
        let label = if kind.is_empty() {
            "PRIVATE KEY".to_string()
        } else {
            format!("{kind} PRIVATE KEY")
        };
        format!(
            "-----BEGIN {label}-----\n{}-----END {label}-----\n",
            self.pem_body(4)
        )
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[derive(Clone, Copy)]
enum As {
    Text,
    Html,
}

struct Case {
    name: &'static str,
    bytes: Vec<u8>,
    scan_as: As,
    /// The rule that must find it; `None` for a look-alike.
    rule: Option<&'static str>,
}

fn leak(name: &'static str, rule: &'static str, text: impl Into<Vec<u8>>) -> Case {
    Case {
        name,
        bytes: text.into(),
        scan_as: As::Text,
        rule: Some(rule),
    }
}

fn html_leak(name: &'static str, rule: &'static str, text: impl Into<Vec<u8>>) -> Case {
    Case {
        scan_as: As::Html,
        ..leak(name, rule, text)
    }
}

fn fine(name: &'static str, text: impl Into<Vec<u8>>) -> Case {
    Case {
        name,
        bytes: text.into(),
        scan_as: As::Text,
        rule: None,
    }
}

fn html_fine(name: &'static str, text: impl Into<Vec<u8>>) -> Case {
    Case {
        scan_as: As::Html,
        ..fine(name, text)
    }
}

/// `text` in lines of 76 characters, each after `indent`, as `base64 -w 76`
/// writes it into a block scalar.
fn wrap(text: &str, indent: &str) -> String {
    text.as_bytes()
        .chunks(76)
        .map(|c| format!("{indent}{}\n", String::from_utf8_lossy(c)))
        .collect()
}

/// Leak shapes: each must be found by the rule named.
fn leaks() -> Vec<Case> {
    let mut f = Fake(0x5eed_f4ce);
    let akia = |f: &mut Fake| format!("AKIA{}", f.s(B32, 16));
    // An AWS secret access key mixes cases and digits; a draw that did not
    // would be a look-alike, not a leak.
    let aws_secret = |f: &mut Fake| loop {
        let s = f.s(B64, 40);
        if values::classes(s.as_bytes()) >= 3 {
            break s;
        }
    };
    let jwt = |f: &mut Fake| {
        format!(
            "eyJ{}.eyJ{}.{}",
            f.s(URLSAFE, 30),
            f.s(URLSAFE, 60),
            f.s(URLSAFE, 43)
        )
    };
    let ghp = |f: &mut Fake, p: &str| format!("gh{p}_{}", f.s(ALNUM, 36));
    let mut cases = vec![
        leak("AWS key id in prose", "aws-access-key-id", format!("Upload with the key {} and nothing else.", akia(&mut f))),
        leak("AWS key id in YAML", "aws-access-key-id", format!("aws_access_key_id: {}\n", akia(&mut f))),
        leak("AWS temporary key id", "aws-access-key-id", format!("AWS_ACCESS_KEY_ID=ASIA{}\n", f.s(B32, 16))),
        leak("AWS secret key in prose", "aws-secret-access-key", format!("The secret access key is {}, keep it safe.", aws_secret(&mut f))),
        leak("AWS secret key in YAML", "aws-secret-access-key", format!("aws_secret_access_key: {}\n", aws_secret(&mut f))),
        leak("AWS secret key in env", "aws-secret-access-key", format!("AWS_SECRET_ACCESS_KEY={}\n", aws_secret(&mut f))),
        leak("AWS secret key in ini", "aws-secret-access-key", format!("[default]\naws_secret_access_key = {}\n", aws_secret(&mut f))),
        leak("AWS secret key in JSON", "aws-secret-access-key", format!("{{\"AccessKeyId\": \"x\", \"SecretAccessKey\": \"{}\"}}", aws_secret(&mut f))),
        leak("AWS secret key in a literals list", "aws-secret-access-key", format!("    literals:\n      - AWS_SECRET_ACCESS_KEY={}\n", aws_secret(&mut f))),
        leak("GitHub classic token", "github-token", format!("GITHUB_TOKEN={}\n", ghp(&mut f, "p"))),
        leak("GitHub OAuth token", "github-token", format!("oauth: {}\n", ghp(&mut f, "o"))),
        leak("GitHub app token", "github-token", format!("use {} here", ghp(&mut f, "s"))),
        leak("GitHub user-to-server token", "github-token", ghp(&mut f, "u")),
        leak("GitHub fine-grained token", "github-fine-grained-token", format!("token: github_pat_{}_{}\n", f.s(ALNUM, 22), f.s(ALNUM, 59))),
        leak("GitLab access token", "gitlab-token", format!("export GITLAB_TOKEN=glpat-{}\n", f.s(URLSAFE, 20))),
        leak("GitLab runner token", "gitlab-token", format!("token = \"glrt-{}\"\n", f.s(URLSAFE, 24))),
        leak("GitLab deploy token", "gitlab-token", format!("password: gldt-{}\n", f.s(URLSAFE, 20))),
        leak("Slack bot token", "slack-token", format!("SLACK_BOT_TOKEN=xoxb-{}-{}-{}\n", f.s(b"0123456789", 12), f.s(b"0123456789", 13), f.s(ALNUM, 24))),
        leak("Slack user token", "slack-token", format!("xoxp-{}-{}-{}-{}", f.s(b"0123456789", 12), f.s(b"0123456789", 12), f.s(b"0123456789", 13), f.s(HEX, 32))),
        leak("Slack webhook", "slack-webhook", format!("Post to https://hooks.slack.com/services/T{}/B{}/{} when done.", f.s(UPPER, 8), f.s(UPPER, 10), f.s(ALNUM, 24))),
        leak("Slack app token", "slack-app-token", format!("xapp-1-A{}-{}-{}", f.s(UPPER, 10), f.s(b"0123456789", 13), f.s(HEX, 64))),
        leak("Discord webhook", "discord-webhook", format!("https://discord.com/api/webhooks/{}/{}", f.s(b"0123456789", 19), f.s(URLSAFE, 68))),
        leak("Stripe live secret key", "stripe-secret-key", format!("STRIPE_SECRET_KEY=sk_live_{}\n", f.s(ALNUM, 99))),
        leak("Stripe restricted key", "stripe-secret-key", format!("key: rk_live_{}\n", f.s(ALNUM, 24))),
        leak("Stripe test secret key", "stripe-secret-key", format!("sk_test_{}", f.s(ALNUM, 24))),
        leak("Stripe webhook secret", "stripe-webhook-secret", format!("STRIPE_WEBHOOK_SECRET=whsec_{}\n", f.s(ALNUM, 32))),
        leak("Google API key", "google-api-key", format!("<script src=\"https://maps.googleapis.com/maps/api/js?key=AIza{}\"></script>", f.s(URLSAFE, 35))),
        leak("Google service-account key", "google-service-account-key", format!("{{\n  \"type\": \"service_account\",\n  \"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n\",\n  \"client_email\": \"x@y.iam.gserviceaccount.com\"\n}}", f.s(B64, 64))),
        leak("Google OAuth client secret", "google-oauth-client-secret", format!("client_secret: GOCSPX-{}\n", f.s(URLSAFE, 28))),
        leak("Google OAuth access token", "google-oauth-access-token", format!("ya29.{}", f.s(URLSAFE, 120))),
        leak("bare JWT in prose", "jwt", format!("The enrollment returns {} and the agent keeps it.", jwt(&mut f))),
        leak("JWT in an Authorization header", "jwt", format!("curl -H 'Authorization: Bearer {}' https://x", jwt(&mut f))),
        leak("JWT as a kubeconfig token", "jwt", format!("users:\n- name: agent\n  user:\n    token: {}\n", jwt(&mut f))),
        leak("RSA private key", "private-key", f.pem("RSA")),
        leak("EC private key", "private-key", f.pem("EC")),
        leak("OpenSSH private key", "private-key", f.pem("OPENSSH")),
        leak("PKCS#8 private key", "private-key", f.pem("")),
        leak("encrypted PKCS#8 private key", "private-key", f.pem("ENCRYPTED")),
        leak("legacy encrypted RSA key", "private-key", format!("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,{}\n\n{}-----END RSA PRIVATE KEY-----\n", f.s(b"0123456789ABCDEF", 32), f.pem_body(3))),
        leak("PGP private key block", "private-key", format!("-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\nComment: agent signing key\n\n{}={}\n-----END PGP PRIVATE KEY BLOCK-----\n", f.pem_body(3), f.s(B64, 4))),
        {
            let mut bytes = b"caf\xe9 \xff\xfe notes\n".to_vec();
            bytes.extend_from_slice(f.pem("RSA").as_bytes());
            bytes.extend_from_slice(b"fin \xe9\xe8\n");
            leak("PEM key in a Latin-1 file", "private-key", bytes)
        },
        leak("PEM key in a YAML block scalar", "private-key", format!("stringData:\n  tls.key: |\n{}", f.pem("EC").lines().map(|l| format!("    {l}\n")).collect::<String>())),
        leak("PEM key in a JSON string", "private-key", format!("{{\"key\": \"-----BEGIN EC PRIVATE KEY-----\\n{}\\n-----END EC PRIVATE KEY-----\"}}", f.s(B64, 64))),
        leak("kubeconfig client-key-data", "kubeconfig-client-key", format!("users:\n- name: admin\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n", b64(b"-----BEGIN CERTIFICATE-----\nMIIB\n"), b64(f.pem("EC").as_bytes()))),
        leak("kubeconfig static token", "generic-secret", format!("users:\n- name: ci\n  user:\n    token: {}\n", f.s(LOWER_DIGITS, 40))),
        leak("ConfigMap binaryData with a PEM key", "private-key-base64", format!("apiVersion: v1\nkind: ConfigMap\nbinaryData:\n  signing.key: {}\n", b64(f.pem("RSA").as_bytes()))),
        leak("ConfigMap binaryData with an env file", "base64-encoded-credential", format!("binaryData:\n  agent.env: {}\n", b64(format!("RUNNER_BOOTSTRAP_TOKEN=wst_{}\n", f.s(LOWER_DIGITS, 24)).as_bytes()))),
        leak("an env file deep in a large binaryData value", "base64-encoded-credential", format!("binaryData:\n  agent.env: {}\n", b64(format!("{}RUNNER_BOOTSTRAP_TOKEN=wst_{}\n", "LOG_LEVEL=info\n".repeat(20_000), f.s(LOWER_DIGITS, 24)).as_bytes()))),
        leak("an env file as wrapped base64 in a block scalar", "base64-encoded-credential", format!("binaryData:\n  agent.env: |\n{}", wrap(&b64(format!("LOG_LEVEL=info\nRUNNER_BOOTSTRAP_TOKEN=wst_{}\n", f.s(LOWER_DIGITS, 24)).as_bytes()), "    "))),
        leak("Secret data with a base64 password", "generic-secret", format!("kind: Secret\ndata:\n  password: {}\n", b64(f.s(ALNUM, 18).as_bytes()))),
        leak("token in a literal block scalar", "generic-secret", format!("token: |\n  {}\n", f.s(ALNUM, 32))),
        leak("token in a folded block scalar", "generic-secret", format!("RUNNER_BOOTSTRAP_TOKEN: >-\n    wst_{}\n", f.s(LOWER_DIGITS, 24))),
        leak("password in stringData", "generic-secret", format!("stringData:\n  DB_PASSWORD: \"{}!{}\"\n", f.s(ALNUM, 8), f.s(ALNUM, 4))),
        leak("bootstrap token in an env file", "generic-secret", format!("RUNNER_BOOTSTRAP_TOKEN=wst_{}\n", f.s(LOWER_DIGITS, 20))),
        leak("api_key in TOML", "generic-secret", format!("[connector]\napi_key = \"{}\"\n", f.s(ALNUM, 32))),
        leak("client_secret in YAML", "generic-secret", format!("oidc:\n  client_secret: {}\n", f.s(URLSAFE, 40))),
        leak("apiKey in JSON", "generic-secret", format!("{{\"apiKey\": \"{}\"}}", f.s(ALNUM, 28))),
        leak("password on a command line", "generic-secret", format!("vault login -method=userpass username=agent --password={}", f.s(ALNUM, 14))),
        leak("token in front matter", "generic-secret", format!("---\ntitle: Enrolling\ndeploy_token: {}\n---\n\nText.\n", f.s(LOWER_DIGITS, 32))),
        leak("api_key in a template", "generic-secret", format!("{{% set api_key = \"{}\" %}}\n<p>{{{{ api_key }}}}</p>", f.s(ALNUM, 32))),
        leak("password in a URL", "url-credentials", format!("DATABASE_URL=postgres://agent:{}@db.internal:5432/runner", f.s(ALNUM, 16))),
        leak("opaque bearer token", "bearer-token", format!("curl -H \"Authorization: Bearer {}\" https://api.internal/v1", f.s(ALNUM, 40))),
        leak("HTTP Basic credentials", "basic-auth-header", format!("Authorization: Basic {}\r\n", b64(format!("agent:{}", f.s(ALNUM, 16)).as_bytes()))),
        leak("Docker config auth", "docker-config-auth", format!("{{\"auths\": {{\"registry.internal\": {{\"auth\": \"{}\"}}}}}}", b64(format!("agent:{}", f.s(ALNUM, 16)).as_bytes()))),
        leak("npm token", "npm-token", format!("//registry.npmjs.org/:_authToken=npm_{}\n", f.s(ALNUM, 36))),
        leak("PyPI token", "pypi-token", format!("password = pypi-AgEIcHlwaS5vcmc{}\n", f.s(URLSAFE, 70))),
        leak("Docker Hub token", "dockerhub-token", format!("echo dckr_pat_{} | docker login -u agent --password-stdin", f.s(URLSAFE, 27))),
        leak("Vault token", "vault-token", format!("VAULT_TOKEN=hvs.{}\n", f.s(URLSAFE, 90))),
        leak("SendGrid key", "sendgrid-api-key", format!("SG.{}.{}", f.s(URLSAFE, 22), f.s(URLSAFE, 43))),
        leak("Azure storage key", "azure-storage-key", format!("DefaultEndpointsProtocol=https;AccountName=runner;AccountKey={}==;EndpointSuffix=core.windows.net", f.s(B64, 86))),
        leak("OpenAI key", "openai-api-key", format!("OPENAI_API_KEY=sk-proj-{}T3BlbkFJ{}\n", f.s(URLSAFE, 40), f.s(URLSAFE, 40))),
        leak("Anthropic key", "anthropic-api-key", format!("sk-ant-api03-{}-{}AA", f.s(URLSAFE, 80), f.s(URLSAFE, 10))),
        leak("DigitalOcean token", "digitalocean-token", format!("dop_v1_{}", f.s(HEX, 64))),
        leak("Shopify token", "shopify-token", format!("shpat_{}", f.s(HEX, 32))),
        leak("age secret key", "age-secret-key", format!("AGE-SECRET-KEY-1{}", f.s(b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58))),
        leak("Terraform Cloud token", "terraform-cloud-token", format!("token = \"{}.atlasv1.{}\"", f.s(ALNUM, 14), f.s(ALNUM, 67))),
        leak("service-account JSON as base64 in a Secret", "base64-encoded-credential", format!("data:\n  key.json: {}\n", b64(format!("{{\"type\": \"service_account\", \"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n\"}}", f.s(B64, 64)).as_bytes()))),
        leak("password in a Latin-1 file", "generic-secret", {
            let mut b = b"contrase\xf1a del agente\npassword: ".to_vec();
            b.extend_from_slice(f.s(ALNUM, 14).as_bytes());
            b.extend_from_slice(b"\n\xe9t\xe9\n");
            b
        }),
        html_leak("password in highlighted YAML", "generic-secret", format!("<pre class=\"code\"><code class=\"language-yaml\"><span class=\"hl-key\">password</span>: <span class=\"hl-string\">{}</span>\n</code></pre>", f.s(ALNUM, 20))),
        html_leak("api_key quoted with references", "generic-secret", format!("<p><code>&quot;api_key&quot;: &quot;{}&quot;</code></p>", f.s(ALNUM, 32))),
        html_leak("PEM key in highlighted HTML", "private-key", format!("<pre><code><span class=\"hl-string\">-----BEGIN RSA PRIVATE KEY-----</span>\n{}<span>-----END RSA PRIVATE KEY-----</span></code></pre>", f.pem_body(3).lines().map(|l| format!("<span class=\"hl-string\">{l}</span>\n")).collect::<String>())),
        html_leak("Slack webhook in a link", "slack-webhook", format!("<a href=\"https://hooks.slack.com/services/T{}/B{}/{}\">alerts</a>", f.s(UPPER, 8), f.s(UPPER, 10), f.s(ALNUM, 24))),
    ];
    // A token next to text in another script still has ASCII word
    // boundaries.
    cases.push(leak(
        "AWS key id next to accented text",
        "aws-access-key-id",
        format!("clave: {} ñ", akia(&mut f)),
    ));
    // Key spellings that hold no other keyword of the rule: the keyword
    // pass must still let the rule run.
    for (name, key, sep) in [
        ("auth.key alone", "auth.key", ": "),
        ("AUTH-KEY alone", "AUTH-KEY", "="),
        ("access.key alone", "access.key", ": "),
        ("private.key alone", "private.key", " = "),
    ] {
        let value = format!("{}9{}", f.s(ALNUM, 12), f.s(LOWER_DIGITS, 12));
        cases.push(leak(name, "generic-secret", format!("{key}{sep}{value}\n")));
    }
    // A password that starts with a sign that also starts references.
    for sign in ["%", "*", "&", "@"] {
        let value = format!("{sign}{}7{}", f.s(ALNUM, 10), f.s(LOWER_DIGITS, 6));
        cases.push(leak(
            "password after a sign",
            "generic-secret",
            format!("DB_PASSWORD={value}\n"),
        ));
    }
    cases
}

/// Look-alikes: none of them may be flagged.
fn look_alikes() -> Vec<Case> {
    let mut f = Fake(0xa110_d00d);
    vec![
        fine("a number under secret", "secret: 607\n"),
        fine("a number under token in code", "Set `token: 148` to retry."),
        fine("prose about the token", "the token is single use, so one agent per install"),
        fine("a secretKeyRef", "          valueFrom:\n            secretKeyRef:\n              name: whystack-agent-env\n              key: RUNNER_BOOTSTRAP_TOKEN\n"),
        fine("an angle-bracket placeholder", "RUNNER_BOOTSTRAP_TOKEN=<token>\n"),
        fine("a braced variable", "RUNNER_BOOTSTRAP_TOKEN=${TOKEN}\n"),
        fine("a shell variable", "RUNNER_BOOTSTRAP_TOKEN=$TOKEN\n"),
        fine("x placeholder", "password: xxxxxxxxxxxx\n"),
        fine("changeme", "password: changeme\n"),
        fine("your-api-key", "api_key: your-api-key-here\n"),
        fine("a Secret's name", "secretName: whystack-agent-env\n"),
        fine("an attestation mode", "RUNNER_ATTESTATION_MODE=bootstrap-token\n"),
        fine("a token path", "RUNNER_GKE_TOKEN_PATH=/var/run/secrets/tokens/gke-oidc/token\n"),
        fine("a projected token", "- serviceAccountToken:\n    audience: whystack-enroll\n    expirationSeconds: 3600\n    path: token\n"),
        fine("an image digest", format!("image: registry.example.com/whystack-agent@sha256:{}\n", f.s(HEX, 64))),
        fine("a commit next to the words secret key", format!("The secret key rotation landed in commit {}.", f.s(HEX, 40))),
        fine("the AWS documentation's key id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"),
        fine("a certificate", format!("-----BEGIN CERTIFICATE-----\n{}-----END CERTIFICATE-----\n", f.pem_body(3))),
        fine("a public key", format!("-----BEGIN PUBLIC KEY-----\n{}-----END PUBLIC KEY-----\n", f.pem_body(2))),
        fine("an SSH public key", format!("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{} agent@runner\n", f.s(B64, 43))),
        fine("kubeconfig certificate data", format!("    client-certificate-data: {}\n    certificate-authority-data: {}\n", b64(format!("-----BEGIN CERTIFICATE-----\n{}", f.pem_body(2)).as_bytes()), b64(format!("-----BEGIN CERTIFICATE-----\n{}", f.pem_body(2)).as_bytes()))),
        fine("an empty token", "token: \"\"\n"),
        fine("stars", "password: ********\n"),
        fine("a bearer placeholder", "curl -H \"Authorization: Bearer <token>\" https://x\n"),
        fine("a bearer variable", "curl -H \"Authorization: Bearer $TOKEN\" https://x\n"),
        fine("a fine-grained token placeholder", format!("github_pat_{}_{}", "x".repeat(22), "x".repeat(59))),
        fine("a classic token placeholder", format!("ghp_{}", "X".repeat(36))),
        fine("Slack's documented webhook", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"),
        fine("a Stripe publishable key", format!("pk_live_{}", f.s(ALNUM, 24))),
        html_fine("an inline image", format!("<img alt=\"logo\" src=\"data:image/png;base64,iVBORw0KGgo{}\">", f.s(B64, 400))),
        fine("a search index", "{\"words\":{\"token\":[1,4,9],\"secret\":[2],\"password\":[3]},\"pages\":[\"/en/secrets/\"]}"),
        fine("a command substitution", "password=$(cat /run/secrets/db-password)\n"),
        fine("a Helm value", "token: {{ .Values.agent.token }}\n"),
        fine("an ellipsis", "TOKEN=...\n"),
        fine("a store mode", "RUNNER_SECRET_STORE_MODE=vault\nsecret_store_mode: aws\n"),
        fine("a SHA256SUMS line", format!("{}  kustomization.yaml\n{}  statefulset.yaml\n", f.s(HEX, 64), f.s(HEX, 64))),
        fine("a secretRef", "- secretRef:\n    name: whystack-agent-env\n    optional: true\n"),
        fine("prose about a key file", "The file begins with `-----BEGIN OPENSSH PRIVATE KEY-----` and must be mode 0600."),
        fine("a cut key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA...\n-----END RSA PRIVATE KEY-----\n"),
        html_fine("a password field", "<input type=\"password\" name=\"password\" autocomplete=\"current-password\">"),
        fine("a CSS variable", ":root { --token-color: #0a7cff; --secret-bg: #f4f4f4; }"),
        fine("script splitting tokens", "const tokens = text.toLowerCase().split(/\\s+/);\nlet token = tokens[0];"),
        fine("an expiry date", "token_expiry: 2025-01-01T00:00:00Z\n"),
        fine("a Secret with a placeholder", "kind: Secret\nstringData:\n  RUNNER_BOOTSTRAP_TOKEN: <paste the token here>\n"),
        fine("a documented URL password", "postgres://user:password@localhost:5432/db"),
        fine("a basic-auth placeholder", "Authorization: Basic <base64 of user:password>"),
        fine("a UUID under a non-secret key", "runner_id: 123e4567-e89b-12d3-a456-426614174000\n"),
        fine("a ConfigMap of JSON as base64", format!("binaryData:\n  config.json: {}\n", b64(b"{\"log\": {\"level\": \"info\"}, \"format\": \"json\"}"))),
        fine("a wrapped base64 ConfigMap of settings", format!("binaryData:\n  agent.env: |\n{}  other.env: {}\n", wrap(&b64("LOG_LEVEL=info\nRUNNER_HEALTH_DIR=/var/run/whystack\n".repeat(4).as_bytes()), "    "), b64(b"MODE=quiet\n"))),
        fine("a token audience", "tokenAudience: whystack-enroll\n"),
        fine("a version under a token key", "tokenVersion: v1.29.0\n"),
        fine("a key id next to letters", format!("xAKIA{}", f.s(B32, 16))),
        fine("a Windows variable", "password: %DB_PASSWORD_FROM_VAULT%\n"),
        fine("a Python format field", "password = \"%(db_password)s\"\n"),
        fine("a YAML alias", "auth_token: *shared-runner-token\n"),
        fine("a YAML anchor", "api_key: &runner-api-key\n  valueFrom: vault\n"),
        fine("a file given with @", "curl -d client_secret=@secrets/client-secret.txt\n"),
    ]
}

fn scan<'s>(scanner: &'s Scanner, case: &Case) -> Vec<Finding<'s>> {
    match case.scan_as {
        As::Text => scanner.scan(&case.bytes),
        As::Html => scanner.scan_html(&case.bytes),
    }
}

#[test]
fn the_shipped_rules_compile_and_find_their_examples() {
    let scanner = Scanner::new();
    assert!(scanner.rules().count() >= 30);
    for rule in scanner.rules() {
        let example = rule.example.concat();
        let found = scanner.scan(example.as_bytes());
        assert!(
            found.iter().any(|f| f.rule.id == rule.id),
            "{}: its example is not found as {0} but as {:?}",
            rule.id,
            found.iter().map(|f| &f.rule.id).collect::<Vec<_>>()
        );
        for not in &rule.not_examples {
            let text = not.concat();
            let found = scanner.scan(text.as_bytes());
            assert!(
                found.is_empty(),
                "{}: {text:?} is flagged as {:?}",
                rule.id,
                found.iter().map(|f| &f.rule.id).collect::<Vec<_>>()
            );
        }
    }
}

#[test]
fn the_corpus_rates() {
    let scanner = Scanner::new();
    let leaks = leaks();
    let fakes = look_alikes();
    assert!(leaks.len() >= 60, "{} leak shapes", leaks.len());
    assert!(fakes.len() >= 30, "{} look-alikes", fakes.len());
    let mut missed = Vec::new();
    for case in &leaks {
        let found = scan(&scanner, case);
        let want = case.rule.unwrap_or_default();
        if !found.iter().any(|f| f.rule.id == want) {
            missed.push(format!(
                "{}: want {want}, got {:?}",
                case.name,
                found.iter().map(|f| &f.rule.id).collect::<Vec<_>>()
            ));
        }
    }
    let mut flagged = Vec::new();
    for case in &fakes {
        let found = scan(&scanner, case);
        if !found.is_empty() {
            flagged.push(format!(
                "{}: {:?}",
                case.name,
                found
                    .iter()
                    .map(|f| format!("{} {}", f.rule.id, f.redacted))
                    .collect::<Vec<_>>()
            ));
        }
    }
    eprintln!(
        "secrets: {}/{} leak shapes detected, {}/{} look-alikes flagged",
        leaks.len() - missed.len(),
        leaks.len(),
        flagged.len(),
        fakes.len()
    );
    assert!(
        missed.is_empty() && flagged.is_empty(),
        "missed:\n{}\nflagged:\n{}",
        missed.join("\n"),
        flagged.join("\n")
    );
}

#[test]
fn findings_never_show_the_secret() {
    let scanner = Scanner::new();
    for case in leaks() {
        for f in scan(&scanner, &case) {
            let text = String::from_utf8_lossy(&case.bytes);
            // The secret part: past the 4 characters a finding may show.
            let m = &text.as_bytes()[f.offset..f.offset + f.len];
            let m = String::from_utf8_lossy(m);
            // Runs that read as names are keys (`SecretAccessKey`), not
            // secrets.
            let long_runs = m
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| w.len() >= 12 && !values::reads_as_name(w.as_bytes()));
            for run in long_runs {
                assert!(
                    !f.redacted.contains(&run[4..]),
                    "{}: {:?} shows {run:?}",
                    case.name,
                    f.redacted
                );
            }
            assert!(
                f.redacted
                    .bytes()
                    .all(|b| b.is_ascii_graphic() || b == b' '),
                "{}: {:?}",
                case.name,
                f.redacted
            );
        }
    }
}

#[test]
fn positions_are_lines_and_columns() {
    let scanner = Scanner::new();
    let token = format!("ghp_{}", Fake(7).s(ALNUM, 36));
    let text = format!("first line\nsé: {token}\n");
    let found = scanner.scan(text.as_bytes());
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].line, found[0].column), (2, 5));
    assert_eq!(found[0].offset, text.find("ghp_").unwrap());
    assert!(
        found[0].redacted.starts_with("ghp_..."),
        "{}",
        found[0].redacted
    );
    assert!(
        found[0].message().contains("GitHub"),
        "{}",
        found[0].message()
    );

    // In HTML, positions are those of the file, not of its text.
    let html = format!(
        "<p>a</p>\n<pre><span class=\"k\">password</span>: <span>{}</span></pre>",
        Fake(8).s(ALNUM, 20)
    );
    let found = scanner.scan_html(html.as_bytes());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].line, 2);
    assert_eq!(found[0].offset, html.find("password").unwrap());
}

#[test]
fn a_rule_found_twice_is_one_finding_and_the_specific_rule_names_it() {
    let scanner = Scanner::new();
    let mut f = Fake(9);
    // The generic rule also matches `token: ghp_…`: the GitHub rule wins.
    let text = format!("token: ghp_{}\n", f.s(ALNUM, 36));
    let found = scanner.scan(text.as_bytes());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].rule.id, "github-token");
    // In HTML, a key in the text is found once.
    let html = format!("<p>ghp_{}</p>", f.s(ALNUM, 36));
    assert_eq!(scanner.scan_html(html.as_bytes()).len(), 1);
}

#[test]
fn bad_rules_files_are_errors_that_name_the_rule() {
    let bad_regex = "rules:\n  - id: x\n    description: d\n    regex: '('\n    example: [a]\n";
    let e = Scanner::from_yaml(bad_regex).err().unwrap().to_string();
    assert!(
        e.contains("rule x") && e.contains("does not compile"),
        "{e}"
    );
    let no_group = "rules:\n  - id: y\n    description: d\n    regex: 'a'\n    secret_group: 1\n    example: [a]\n";
    let e = Scanner::from_yaml(no_group).err().unwrap().to_string();
    assert!(e.contains("no group 1"), "{e}");
    let unknown = "rules:\n  - id: z\n    description: d\n    regex: 'a'\n    colour: red\n    example: [a]\n";
    assert!(Scanner::from_yaml(unknown).is_err());
}

#[test]
fn findings_are_bounded_on_hostile_input() {
    let scanner = Scanner::new();
    let mut f = Fake(10);
    let mut text = String::new();
    for _ in 0..3000 {
        text.push_str(&format!("ghp_{}\n", f.s(ALNUM, 36)));
    }
    assert_eq!(scanner.scan(text.as_bytes()).len(), MAX_FINDINGS);
    // A megabyte of one byte, of keywords, of base64: bounded time.
    let start = std::time::Instant::now();
    for blob in [
        vec![b'a'; 1 << 20],
        b"token password secret ".repeat(50_000),
        b"k: ".iter().chain(&vec![b'Q'; 1 << 20]).copied().collect(),
        b"-----BEGIN RSA PRIVATE KEY-----\n".repeat(30_000),
        // Indented lines each holding an anchor: pretty-printed JSON, a
        // YAML map (a window walks an indented block once, not once an
        // anchor).
        b"  \"f\": \"0123456789abcdef0123456789abcdef\",\n  token_n: x\n".repeat(30_000),
    ] {
        scanner.scan(&blob);
        scanner.scan_html(&blob);
    }
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
}

#[test]
fn the_repository_s_own_inputs_are_clean() {
    let scanner = Scanner::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut flagged = Vec::new();
    let mut files = 0;
    for dir in ["content", "bases", "templates"] {
        for entry in walkdir::WalkDir::new(root.join(dir)) {
            let entry = entry.unwrap();
            if !entry.file_type().is_file() {
                continue;
            }
            files += 1;
            let bytes = std::fs::read(entry.path()).unwrap();
            let name = entry.path().to_string_lossy().into_owned();
            for f in scanner.scan_file(&name, &bytes) {
                flagged.push(format!(
                    "{name}:{}:{} {} {}",
                    f.line, f.column, f.rule.id, f.redacted
                ));
            }
        }
    }
    for file in ["image-releases.yaml", "site.yaml", "README.md"] {
        files += 1;
        let bytes = std::fs::read(root.join(file)).unwrap();
        for f in scanner.scan(&bytes) {
            flagged.push(format!(
                "{file}:{}:{} {} {}",
                f.line, f.column, f.rule.id, f.redacted
            ));
        }
    }
    assert!(files > 30, "{files} files");
    assert!(flagged.is_empty(), "{}", flagged.join("\n"));
}

/// A parsed regex with its anchors and word boundaries dropped: one that
/// matches more, and that proptest can generate texts for.
fn without_looks(hir: &regex_syntax::hir::Hir) -> regex_syntax::hir::Hir {
    use regex_syntax::hir::{Capture, Hir, HirKind, Repetition};
    match hir.kind() {
        HirKind::Look(_) => Hir::empty(),
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            sub: Box::new(without_looks(&r.sub)),
            ..r.clone()
        }),
        HirKind::Capture(c) => Hir::capture(Capture {
            sub: Box::new(without_looks(&c.sub)),
            ..c.clone()
        }),
        HirKind::Concat(subs) => Hir::concat(subs.iter().map(without_looks).collect()),
        HirKind::Alternation(subs) => Hir::alternation(subs.iter().map(without_looks).collect()),
        _ => hir.clone(),
    }
}

/// A rule's keywords decide whether its regex runs at all, so they must be
/// a necessary condition of it: every text the regex matches holds one of
/// them. A keyword list that misses a spelling the regex accepts (a key
/// written `auth.key` when only `auth_key` is listed) silently turns off
/// the rule for a file that has nothing else. Texts drawn from each regex
/// check it, for every rule that has keywords.
#[test]
fn every_match_of_a_rule_holds_one_of_its_keywords() {
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    let scanner = Scanner::new();
    for Rule {
        data: rule, regex, ..
    } in scanner.rules.iter().filter(|r| !r.data.keywords.is_empty())
    {
        let hir = regex_syntax::ParserBuilder::new()
            .unicode(false)
            .utf8(false)
            .build()
            .parse(&rule.regex)
            .unwrap_or_else(|e| panic!("{}: {e}", rule.id));
        let texts = proptest::string::bytes_regex_parsed(&without_looks(&hir))
            .unwrap_or_else(|e| panic!("{}: {e}", rule.id));
        let keywords: Vec<Vec<u8>> = rule
            .keywords
            .iter()
            .map(|k| k.to_ascii_lowercase().into_bytes())
            .collect();
        let mut runner = TestRunner::new(Config {
            cases: 200,
            failure_persistence: None,
            ..Config::default()
        });
        let outcome = runner.run(&texts, |text| {
            for m in regex.find_iter(&text) {
                let lower = text[m.range()].to_ascii_lowercase();
                if !keywords
                    .iter()
                    .any(|k| memchr::memmem::find(&lower, k).is_some())
                {
                    return Err(TestCaseError::fail(format!(
                        "{:?} matches but holds none of the keywords {:?}",
                        String::from_utf8_lossy(&text[m.range()]),
                        rule.keywords
                    )));
                }
            }
            Ok(())
        });
        if let Err(e) = outcome {
            panic!("{}: {e}", rule.id);
        }
    }
}

/// A windowed rule's regex runs near its anchors only (see `window` in
/// the rules file), which must find what a scan of the whole file finds.
/// Texts mix what each regex matches with the bytes around a match that
/// decide it (line breaks, indentation, quotes, `:` and `=`), and both
/// scans of each text must agree.
#[test]
fn windows_find_what_a_whole_scan_finds() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    let windowed: Vec<RuleData> = Scanner::new()
        .rules()
        .filter(|r| r.window.is_some())
        .cloned()
        .collect();
    assert!(windowed.len() >= 2, "{} windowed rules", windowed.len());
    let shipped: Vec<RuleData> = Scanner::new().rules().cloned().collect();
    for rule in windowed {
        // All the rules, for a base64 value decodes to what the others
        // find; only this one's window taken away.
        let with = Scanner::from_rules(shipped.clone()).unwrap();
        let without = Scanner::from_rules(
            shipped
                .iter()
                .map(|r| match r.id == rule.id {
                    true => RuleData {
                        window: None,
                        ..r.clone()
                    },
                    false => r.clone(),
                })
                .collect(),
        )
        .unwrap();
        let hir = regex_syntax::ParserBuilder::new()
            .unicode(false)
            .utf8(false)
            .build()
            .parse(&rule.regex)
            .unwrap();
        let matching = proptest::string::bytes_regex_parsed(&without_looks(&hir)).unwrap();
        // The example, a finding, with line breaks, indentation and block
        // headers put in: wrapped values, keys a line above their values.
        let example = rule.example.concat().into_bytes();
        let breaks: &[&[u8]] = &[b"\n", b"\n  ", b"\r\n\t", b" |\n  ", b"\n ", b" "];
        let broken = proptest::collection::vec(
            (0..=example.len(), prop::sample::select(breaks.to_vec())),
            0..3,
        )
        .prop_map(move |cuts| {
            let mut text = example.clone();
            let mut cuts = cuts;
            cuts.sort_unstable_by_key(|c| std::cmp::Reverse(c.0));
            for (at, what) in cuts {
                text.splice(at..at, what.iter().copied());
            }
            text
        });
        let piece = prop_oneof![
            3 => matching,
            3 => broken,
            2 => proptest::collection::vec(
                prop::sample::select(b"aZ09+/=:|>-\"' \t\r\n\n\n{,.".to_vec()),
                0..40
            ),
        ];
        let texts = proptest::collection::vec(piece, 1..8).prop_map(|parts| parts.concat());
        let mut runner = TestRunner::new(Config {
            cases: 400,
            failure_persistence: None,
            ..Config::default()
        });
        let show = |s: &Scanner, text: &[u8]| -> Vec<(String, usize, usize, String)> {
            s.scan(text)
                .into_iter()
                .map(|f| (f.rule.id.clone(), f.offset, f.len, f.redacted))
                .collect()
        };
        let outcome = runner.run(&texts, |text| {
            let (a, b) = (show(&with, &text), show(&without, &text));
            if a != b {
                return Err(TestCaseError::fail(format!(
                    "{:?}: windows find {a:?}, the whole scan {b:?}",
                    String::from_utf8_lossy(&text)
                )));
            }
            Ok(())
        });
        if let Err(e) = outcome {
            panic!("{}: {e}", rule.id);
        }
    }
}
