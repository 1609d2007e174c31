//! Secrets never leave the machine: a table of secret texts (the shapes users paste, the evasions
//! that hide them, and near misses that must stay whole) driven through the real component in the
//! shim against the Graphiti stand-in. Each text is a turn's prompt, its reply repeats it, and it is
//! searched for, forgotten and corrected; then every request the stand-in received and every file
//! under the state directory are searched for the secret.

use graphiti_openclaw_tests::{
    standin,
    copy_dir, example_config, graphiti_shim as shim, hook_context, prompt, temp_dir,
};
use graphiti_standin::StandIn;
use host_shim::{
    AgentEndEvent, CaptureOutcome, ChatType, Command, Correction, ForgetRequest, HookContext,
    MemoryCommand, SearchRequest, Shim,
};
use std::path::Path;

/// A text a user may send, what of it must never leave (empty: a near miss, which reaches Graphiti
/// whole), and the reply (the text repeated when none).
struct Row {
    text: &'static str,
    secrets: &'static [&'static str],
    reply: Option<&'static str>,
}

const fn secret(text: &'static str, secrets: &'static [&'static str]) -> Row {
    Row {
        text,
        secrets,
        reply: None,
    }
}

const fn kept(text: &'static str) -> Row {
    Row {
        text,
        secrets: &[],
        reply: None,
    }
}

const ROWS: &[Row] = &[
    // Keys by their issuers' prefixes.
    secret("my key is sk-proj-4fG7hJ2kL9mN3pQ8rS5tV1wXa2B3c4D5", &["4fG7hJ2kL9mN3pQ8"]),
    secret(
        "anthropic sk-ant-api03-Zx8qL2vN9pR4tY7wK1mB5cH3jD6fG0sAq1W2e3R4t5",
        &["Zx8qL2vN9pR4tY7w"],
    ),
    secret("token ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6", &["aB3dE6gH9jK2mN5p"]),
    secret(
        "pat github_pat_11ABCDEFG0abcdefghij0123456789KLMNOPQRSTUVwxyz98765",
        &["11ABCDEFG0abcdef"],
    ),
    secret("slack xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx", &["AbCdEfGhIjKlMnOp"]),
    secret("aws id AKIA2E0A8F3B244C9986 for the bucket", &["AKIA2E0A8F3B244C9986"]),
    secret(
        "AKIA2E0A8F3B244C9987 wJalrXUtnFEMI/K7MDENG/bPxRfiCY9xAmPlEkEy",
        &["AKIA2E0A8F3B244C9987", "wJalrXUtnFEMI/K7MDENG"],
    ),
    secret("maps AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", &["SyD-9tSrke72PouQ"]),
    secret("gitlab glpat-xY7zW2vU9tS4rQ1pO6nM", &["xY7zW2vU9tS4rQ1p"]),
    secret("npm npm_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6", &["npm_aB3dE6gH9jK2"]),
    secret("hf hf_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hq", &["hf_aB3dE6gH9jK2m"]),
    secret(
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        &["dozjgNryP4J3jVmN"],
    ),
    // Providers users paste most.
    secret("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", &["4eC39HqLyjWDarjt"]),
    secret("restricted rk_live_51HxYz0aBcDeFgHiJkLmNo", &["51HxYz0aBcDeFgHi"]),
    secret("webhook secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", &["MfKQ9r8GKYqrTwjU"]),
    secret(
        "post to https://hooks.slack.com/services/T024BE7LD/B01ABCDEF12/aBcDeFgHiJkLmNoPqRsTuVwX",
        &["aBcDeFgHiJkLmNoPqRsTuVwX", "B01ABCDEF12"],
    ),
    secret(
        "discord https://discord.com/api/webhooks/112233445566778899/Ab-Cd_EfGh1234IjKl5678MnOp",
        &["Ab-Cd_EfGh1234IjKl5678"],
    ),
    secret("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0", &["AAHdqTcvCH1vGWJx"]),
    secret(
        "bot token MTAzMTIzNDU2Nzg5MDEyMzQ1Ng.GaBcDe.abcdefghijklmnopqrstuvwxyz012345",
        &["MTAzMTIzNDU2Nzg5", "abcdefghijklmnopqrstuvwxyz012345"],
    ),
    secret("db postgres://ana:Pa55w0rdX9@db.internal:5432/app", &["Pa55w0rdX9"]),
    secret("cache redis://:S3cretPass99@cache:6379/0", &["S3cretPass99"]),
    secret("SECRET_KEY=Zx8qL2vN9pR4tY7wK1mB5c", &["Zx8qL2vN9pR4tY7wK1mB5c"]),
    secret(r#"{"api_key": "a1b2c3d4e5f6g7h8i9j0k1l2"}"#, &["a1b2c3d4e5f6g7h8i9j0k1l2"]),
    // Private keys.
    secret(
        "here:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq7BFUpkGp3\n-----END RSA PRIVATE KEY-----",
        &["MIIEowIBAAKCAQEAq7BFUpkGp3"],
    ),
    secret(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n-----END OPENSSH PRIVATE KEY-----",
        &["b3BlbnNzaC1rZXktdjEAAAAABG5vbmU"],
    ),
    secret(
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0bxQ8BCADnX9zQ\n-----END PGP PRIVATE KEY BLOCK-----",
        &["lQOYBF0bxQ8BCADnX9zQ"],
    ),
    // Cards.
    secret("card 4111 1111 1111 1111 thanks", &["4111 1111 1111 1111"]),
    secret("card 4111 1111 1111 1111 12/29", &["4111 1111 1111 1111"]),
    secret("5555555555554444 123 is the cvv", &["5555555555554444"]),
    secret("ref 12 4012 8888 8888 1881", &["4012 8888 8888 1881"]),
    secret("dots 4242.4242.4242.4242 ok", &["4242.4242.4242.4242"]),
    secret("amex 3782-822463-10005.", &["3782-822463-10005"]),
    // Passwords.
    secret("my wifi password: Zebra-42-Lamp", &["Zebra-42-Lamp"]),
    secret(r#"{"password": "Tr0ub4dor&3x"}"#, &["Tr0ub4dor"]),
    secret("DB_PASSWORD=s3cr3t!Xq", &["s3cr3t!Xq"]),
    secret("export PGPASSWORD=hunter2hunter && psql", &["hunter2hunter"]),
    secret("db_password: Mango-77-Tree", &["Mango-77-Tree"]),
    secret("password: \"Open Sesame 42", &["Open Sesame 42"]),
    secret("password: “Blue Whale 77” for the box", &["Blue Whale 77"]),
    secret("the door PIN: 739182", &["739182"]),
    secret("passphrase=correct-horse-battery-9", &["correct-horse-battery-9"]),
    secret("Passwort: Geheim-2024!", &["Geheim-2024"]),
    secret("my password is Xylo-93-Quartz.", &["Xylo-93-Quartz"]),
    // Evasions.
    secret(
        "key sk-proj-4fG7hJ2kL9\u{200B}mN3pQ8rS5tV1wXa2B3c4D5e6F7",
        &["4fG7hJ2kL9", "mN3pQ8rS5tV1wXa2"],
    ),
    secret(
        "key sk-proj-Qw7eR4tY1uI8oP5aS2dF6g\nH3jK9lZ0xC7vB4nM1qW8eR",
        &["Qw7eR4tY1uI8oP5a", "H3jK9lZ0xC7vB4nM"],
    ),
    secret(
        "key sk-proj-Lp3Ok9Ij8Uh7 Yg6Tf5Rd4Es3Wa2Qz1Xc0",
        &["Lp3Ok9Ij8Uh7", "Yg6Tf5Rd4Es3Wa2Q"],
    ),
    secret(
        "key ｓｋ－ｐｒｏｊ－Ｍｎ８Ｂｖ７Ｃｘ６Ｚａ５Ｓｄ４Ｆｇ３Ｈｊ２Ｋｌ１",
        &["Ｍｎ８Ｂｖ７Ｃｘ６", "Mn8Bv7Cx6Za5Sd4F"],
    ),
    secret(
        "key ghp_Ab1Cd2Ef3G\u{AD}h4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3",
        &["Ab1Cd2Ef3G", "h4Ij5Kl6Mn7Op8Qr"],
    ),
    secret("card 4000\u{200B}0566 5566 5556 now", &["0566 5566 5556"]),
    secret("card ５１０５ １０５１ ０５１０ ５１００", &["５１０５ １０５１", "5105 1051 0510"]),
    secret("ｐａｓｓｗｏｒｄ： ｈｕｎｔｅｒ２ｘｙｚ", &["ｈｕｎｔｅｒ２ｘｙｚ", "hunter2xyz"]),
    // A value the reply repeats on its own.
    Row {
        text: "the router password: Quartz-88-Lamp",
        secrets: &["Quartz-88-Lamp"],
        reply: Some("Saved Quartz-88-Lamp for the router."),
    },
    Row {
        text: "use sk-ant-api03-Rt5Yu6Io7Pa8Sd9Fg0Hj1Kl2Zx3Cv4Bn5Mq",
        secrets: &["Rt5Yu6Io7Pa8Sd9F"],
        reply: Some("Stored the key Rt5Yu6Io7Pa8Sd9Fg0Hj1Kl2Zx3Cv4Bn5Mq in your vault notes."),
    },
    // Near misses: no secret, kept whole.
    kept("set pin=13 as the output"),
    kept("pwd: /home/ana/projects"),
    kept("Passcode: see the e-mail"),
    kept("use sk-learn-compatible-estimators here"),
    kept("I forgot my password again"),
    kept("the password policy: 12 characters"),
    kept("the password is required here"),
    kept("order 4111 1111 1111 1112 shipped"),
    kept("commit 9fceb02d0ae598e95dc970b74767f19372d61af8"),
    kept("timestamp 1795393800000 logged"),
    kept("set max_tokens: 2048 please"),
    kept("ask-the-team and skip-this-step"),
    kept("-----BEGIN PUBLIC KEY----- is fine"),
    kept("call +44 20 7946 0958 tomorrow"),
    kept("password_hint: blue sky"),
];


fn config(standin: &StandIn) -> tempfile::TempDir {
    let dir = temp_dir("redaction-config");
    copy_dir(&example_config(), dir.path());
    let settings = format!(
        "schema_version: 1\n\
         graphiti:\n  url: {}/mcp\n  transport: mcp\n\
         recall:\n  min_relevance: 0\n\
         skip:\n  min_prompt_chars: 1\n\
         capture:\n  backoff_initial_ms: 10\n  backoff_max_ms: 40\n",
        standin.url()
    );
    std::fs::write(dir.path().join("settings.yaml"), settings).unwrap();
    dir
}

fn end(user: &str, reply: &str) -> AgentEndEvent {
    let messages = serde_json::json!([
        {"role": "user", "content": user},
        {"role": "assistant", "content": reply}
    ]);
    AgentEndEvent {
        success: true,
        error: None,
        messages_json: messages.to_string(),
        duration_ms: Some(900),
    }
}

fn dm(sender: &str) -> HookContext {
    HookContext {
        sender_id: Some(sender.into()),
        ..hook_context(&format!("agent:main:telegram:direct:{sender}"), ChatType::Direct)
    }
}

/// The row's text through every path that sends or keeps text.
fn drive(shim: &mut Shim, row: &Row) {
    let chat = dm("ana");
    shim.before_agent_start(&prompt(row.text), &chat);
    let reply = row.reply.map_or_else(|| format!("Noted: {}", row.text), str::to_string);
    let outcome = shim.agent_end(&end(row.text, &reply), &chat);
    assert!(
        matches!(outcome, CaptureOutcome::Spooled(_)),
        "{:?} not captured: {outcome:?}",
        row.text
    );
    // Searches, forgets and corrections in another chat: a forget holds its chat's captures.
    let other = dm("bo");
    shim.run_command(&Command::Search(SearchRequest {
        query: row.text.into(),
        ctx: other.clone(),
    }));
    shim.run_command(&Command::Memory(MemoryCommand::Forget(ForgetRequest {
        query: Some(row.text.into()),
        ids: vec![],
        everything: false,
        earlier_groups: false,
        ctx: other.clone(),
        operator: false,
        at_once: false,
    })));
    shim.run_command(&Command::Memory(MemoryCommand::Correct(Correction {
        old: row.text.into(),
        now_true: "it was changed".into(),
        ctx: other,
    })));
}

/// Every file under `dir`, as text.
fn files_under(dir: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            found.push((
                path.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
    found
}

#[test]
fn no_secret_reaches_graphiti_or_the_state_directory() {
    assert!(ROWS.len() >= 60, "{} rows", ROWS.len());
    let standin = standin();
    let config = config(&standin);
    let state = temp_dir("redaction-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    for row in ROWS {
        drive(&mut shim, row);
    }
    while shim.tick().sent > 0 {}
    let requests: Vec<String> = standin.requests().into_iter().map(|r| r.body).collect();
    let searches = requests.iter().filter(|b| b.contains("search")).count();
    assert!(searches >= ROWS.len() * 3, "{searches} searches were received");
    let files = files_under(state.path());
    let mut leaks = Vec::new();
    for row in ROWS {
        for secret in row.secrets {
            let escaped = serde_json::to_string(secret).unwrap();
            let escaped = escaped.trim_matches('"');
            if let Some(body) = requests.iter().find(|b| b.contains(secret) || b.contains(escaped)) {
                leaks.push(format!("{:?}: {secret:?} was sent: {body}", row.text));
            }
            if let Some((path, _)) = files.iter().find(|(_, text)| text.contains(secret) || text.contains(escaped)) {
                leaks.push(format!("{:?}: {secret:?} is kept in {path}", row.text));
            }
        }
    }
    assert!(leaks.is_empty(), "{} leaks:\n{}", leaks.len(), leaks.join("\n"));
    let episodes: Vec<String> = standin.episodes().into_iter().map(|e| e.content).collect();
    for row in ROWS.iter().filter(|r| r.secrets.is_empty()) {
        assert!(
            episodes.iter().any(|e| e.contains(row.text)),
            "{:?} did not reach Graphiti whole: {episodes:#?}",
            row.text
        );
    }
}
