#![cfg(feature = "fuzzing")]
use mcp_kernel_router::fuzzing::UriTemplate;
use std::time::Instant;

fn time(t: &str, u: &str) {
    let t2 = UriTemplate::parse(t).unwrap();
    let s = Instant::now();
    let mut r = false;
    for _ in 0..5 {
        r = t2.captures(u).is_some();
    }
    println!("{t} len={} -> {r} avg {:?}", u.len(), s.elapsed() / 5);
}
#[test]
fn perf() {
    let mb = 1_000_000;
    time("a/{+p}", &format!("a/{}", "b".repeat(mb)));
    time("a/{x}", &format!("a/{}", "%41".repeat(mb / 3)));
    time("a/{x}", &format!("a/{}%zz", "%41".repeat(mb / 3)));
    time("a/{+a}/{+b}/{+c}/{+d}", &format!("a/{}", "b/".repeat(mb / 2)));
    time("a/{+x}{+x}{+x}{+x}{+x}{+x}{+x}{+x}", &format!("a/{}", "ab".repeat(mb / 2)));
    time(
        "a/{+x}{+y}{+z}{+w}{+v}{+u}{+t}{+s}{+r}{+q}{+o}{+n}{+m}{+l}{+k}{+j}",
        &format!("a/{}", "ab".repeat(mb / 2)),
    );
    let many: String = (0..64).map(|i| format!("{{+v{i}}}")).collect();
    time(&format!("a/{many}"), &format!("a/{}", "ab".repeat(mb / 2)));
}
