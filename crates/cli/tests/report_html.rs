//! The lab's HTML report, opened in a real browser: headless Chromium
//! loads `report.html` from a file (no network), and the test checks that
//! the page logs no console error, that its DOM holds every table and
//! every chart, and that the screenshot is not blank.
//!
//! The report is the recorded `ibm-6513` sweep (docs/results): the demo's
//! two configurations and twenty-two more, among them a failed run and
//! runs whose channels did not form, as expected, so every kind of bar is
//! drawn. One Chromium launch does both the screenshot and the DOM dump.

use lagkit_lab::report::Report;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child process killed and reaped on drop, so a hung browser does not
/// outlive the test.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs chromium headless on `page`; returns (DOM, stderr) once it exits,
/// failing after `limit`.
fn chromium(page: &Path, shot: &Path, profile: &Path, limit: Duration) -> (String, String) {
    let out = page.with_extension("dom");
    let err = page.with_extension("stderr");
    let child = Command::new("chromium")
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,2400",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn();
    let mut child = match child {
        Ok(c) => Reaped(c),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "chromium is not installed: run `sudo bash scripts/setup.sh test` \
             (Debian package chromium)"
        ),
        Err(e) => panic!("starting chromium: {e}"),
    };
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "chromium did not exit within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let dom = std::fs::read_to_string(&out).unwrap();
    let stderr = std::fs::read_to_string(&err).unwrap();
    assert!(status.success(), "chromium failed: {status}\n{stderr}");
    (dom, stderr)
}

/// The texts of an SVG's `<text>` elements, trimmed.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..t.find("</text>")?];
            Some(body.trim().to_string())
        })
        .collect()
}

/// Decodes the PNG; returns (width, height, distinct colours, share of
/// pixels that are not white).
fn picture(path: &Path) -> (u32, u32, usize, f64) {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let data = &buf[..info.buffer_size()];
    let mut colours = std::collections::HashSet::new();
    let mut inked = 0usize;
    for p in data.chunks(px) {
        let rgb = [
            p[0],
            p.get(1).copied().unwrap_or(p[0]),
            p.get(2).copied().unwrap_or(p[0]),
        ];
        colours.insert(rgb);
        if rgb.iter().any(|c| *c < 240) {
            inked += 1;
        }
    }
    let total = (info.width * info.height) as f64;
    (info.width, info.height, colours.len(), inked as f64 / total)
}

#[test]
fn the_html_report_renders_in_chromium_with_every_table_and_chart() {
    let t0 = Instant::now();
    let json = root().join("docs/results/ibm-6513/report.json");
    let report: Report = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-html");
    let _ = std::fs::remove_dir_all(&dir);
    let files = report.write(&dir.join("report")).unwrap();
    let page = dir.join("report/report.html");
    assert!(files.contains(&page), "{files:?}");
    let measured = report
        .runs
        .iter()
        .filter(|r| r.measurement.is_some())
        .count();

    let shot = dir.join("report.png");
    let (dom, stderr) = chromium(&page, &shot, &dir.join("profile"), Duration::from_secs(60));

    // No console message at all: the page has no script, so any is an error
    // (a blocked resource, a parse error).
    let console: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .collect();
    assert!(console.is_empty(), "console messages: {console:#?}");

    // Nothing to fetch: no script, no stylesheet, image or font from a file
    // or the network.
    for needle in ["<script", "<link", " src=", " href=", "url("] {
        assert!(!dom.contains(needle), "the page refers to {needle}");
    }

    // The DOM the browser built: three tables, one chart per measured run
    // plus goodput, each with its bars and text.
    assert_eq!(dom.matches("<table").count(), 3, "findings, runs, codes");
    for id in ["findings", "runs", "goodput", "codes", "links"] {
        assert!(dom.contains(&format!("id=\"{id}\"")), "no #{id}");
    }
    let figures: Vec<&str> = dom.split("<figure").skip(1).collect();
    assert_eq!(figures.len(), 1 + measured);
    for f in &figures {
        assert!(f.contains("<svg"), "a figure without its chart");
        assert!(f.matches("<rect").count() >= 3, "a chart without bars");
        assert!(f.matches("<text").count() >= 5, "a chart without labels");
    }
    let runs_table = &dom[dom.find("class=\"runs\"").unwrap()..];
    let runs_table = &runs_table[..runs_table.find("</table>").unwrap()];
    assert_eq!(
        runs_table.matches("<tr").count(),
        1 + report.runs.len(),
        "a row per run"
    );
    let marks = texts(figures[0]);
    assert!(marks.iter().any(|t| t == "failed"), "the failed run's mark");
    assert!(
        marks.iter().any(|t| t == "not formed"),
        "the not-formed runs' mark"
    );

    // The screenshot: full size, with ink and colour on it.
    let (w, h, colours, inked) = picture(&shot);
    assert_eq!((w, h), (1280, 2400));
    assert!(colours > 16, "{colours} colours: blank?");
    assert!(
        inked > 0.02,
        "{:.3} of the pixels are not white: blank?",
        inked
    );
    eprintln!(
        "report.html rendered: {} figures, {colours} colours, {:.1}% inked, {:.1} s",
        figures.len(),
        100.0 * inked,
        t0.elapsed().as_secs_f64()
    );
}

/// Measures every flag badge in the page as Chromium lays it out at the
/// test's 1280 px: a copy of the page with a script at its end (the report
/// itself has none) that writes each `.flag`'s box, and the box of the
/// runs table's scrolling frame, into the DOM that `--dump-dom` prints.
const PROBE: &str = r#"<script>
(function () {
  const vw = document.documentElement.clientWidth;
  const frame = document.querySelector('.wide').getBoundingClientRect();
  const boxes = Array.from(document.querySelectorAll('.flag')).map(function (e) {
    const r = e.getBoundingClientRect();
    return [r.left, r.right, r.width, r.height].map(Math.round).join(',');
  });
  const p = document.createElement('pre');
  p.id = 'probe';
  p.textContent = 'viewport ' + vw + ' frame ' + Math.round(frame.right) + ' flags ' + boxes.join(' ');
  document.body.appendChild(p);
})();
</script>"#;

/// The runs' flags (failed, not formed, CPU-bound, starved) are read at a
/// glance: at a 1280 px window every flag badge lies inside the viewport
/// and inside the runs table's visible frame, without scrolling the
/// table sideways, even with the longest flags a run can have.
#[test]
fn the_flags_stay_in_sight_at_1280_px() {
    let json = root().join("docs/results/ibm-6513/report.json");
    let mut report: Report =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    report.runs[0].flags = vec![
        "CPU-bound (97% busy): the CPU, not the links, may have set the rate".into(),
        "starved (36% steal: the hypervisor kept the CPUs from running): the machine's host, not the links, may have set the rate".into(),
        "LACP changed during the run: h1 e2 not in sync".into(),
    ];
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-flags");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let html = report.html();
    assert!(!html.contains("<script"), "the report itself has no script");
    let page = dir.join("probe.html");
    std::fs::write(&page, html.replace("</body>", &format!("{PROBE}\n</body>"))).unwrap();
    let (dom, stderr) = chromium(
        &page,
        &dir.join("probe.png"),
        &dir.join("profile"),
        Duration::from_secs(60),
    );
    let probe = dom
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|p| p.split("</pre>").next())
        .unwrap_or_else(|| panic!("the probe did not run:\n{stderr}"));
    let words: Vec<&str> = probe.split_whitespace().collect();
    let viewport: f64 = words[1].parse().unwrap();
    let frame: f64 = words[3].parse().unwrap();
    assert!((1200.0..=1280.0).contains(&viewport), "{probe}");
    let boxes: Vec<Vec<f64>> = words[5..]
        .iter()
        .map(|b| b.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    // A flag for run 1's three, the failed run and the five not formed.
    assert!(boxes.len() >= 9, "{probe}");
    let edge = viewport.min(frame);
    for b in &boxes {
        let (left, right, width, height) = (b[0], b[1], b[2], b[3]);
        assert!(width > 0.0 && height > 0.0, "a flag not drawn: {probe}");
        assert!(
            left >= 0.0 && right <= edge,
            "a flag at {left}..{right} px, out of sight past {edge} px: {probe}"
        );
    }
}
