//! Functions with `session: isolated` (spec §6): the caller gets a fresh child session of the same
//! expert, given the function and its inputs, and only the function's outputs back. This builds that
//! child session's key and message; the host runs it.

use super::package::Package;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// One call of an isolated function: which, with what, from which session, and the function's
/// approved learnings (spec §12: they apply when it runs).
pub struct IsolatedCall<'a> {
    pub function: &'a str,
    pub inputs_json: &'a str,
    pub caller: &'a str,
    pub learnings: Option<&'a str>,
}

/// The child session and its message for `call`; the JSON object the `expert_function` tool's
/// host reads.
pub fn isolated_call(
    package: &Package,
    call: &IsolatedCall,
    now_secs: u64,
) -> Result<Value, String> {
    let IsolatedCall {
        function,
        inputs_json,
        caller,
        learnings,
    } = *call;
    let f = package
        .functions
        .iter()
        .find(|f| f.name == function)
        .ok_or_else(|| format!("{} has no function {function:?}", package.name))?;
    if !f.isolated {
        return Err(format!(
            "{function} runs inline (no `session: isolated`): read {} and apply it in this session",
            f.path
        ));
    }
    let inputs: Value = serde_json::from_slice(inputs_json.as_bytes())
        .map_err(|e| format!("the inputs are not JSON: {e}"))?;
    if !inputs.is_object() {
        return Err("the inputs are not a JSON object".into());
    }
    // A key of its own per call: the caller, the function, its inputs and the time.
    let digest = Sha256::digest(format!("{caller}\n{function}\n{inputs}\n{now_secs}").as_bytes());
    let id: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    let session_key = format!("{}:fn-{id}", package.session_label());
    let mut message = format!(
        "Run the function `{function}` ({}) for another session of {expert} and answer with its \
         outputs only, as one ```json block.\n\n## Inputs\n\n```json\n{}\n```\n\n## The function\n\n{}\n",
        f.path,
        serde_json::to_string_pretty(&inputs).unwrap_or_default(),
        f.text.trim(),
        expert = package.name
    );
    if let Some(learnings) = learnings {
        message.push_str(&format!(
            "\n## Approved learnings of this function (newest first)\n\n{learnings}\n"
        ));
    }
    Ok(json!({ "session_key": session_key, "message": message }))
}
