//! The samples a scrape reads at its moment (sessions, connections, queues, memory, the apps'
//! readings), handed to the registry as one collector so they are encoded beside its own.

use std::sync::Mutex;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// One value read at scrape time.
#[derive(Debug, Clone)]
pub struct Sample {
    pub name: String,
    pub help: String,
    pub counter: bool,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

impl Sample {
    pub fn gauge(name: &str, help: &str, value: f64) -> Self {
        Self {
            name: name.into(),
            help: help.into(),
            counter: false,
            labels: Vec::new(),
            value,
        }
    }

    pub fn counter(name: &str, help: &str, value: f64) -> Self {
        Self {
            counter: true,
            ..Self::gauge(name, help, value)
        }
    }

    pub fn label(mut self, name: &str, value: &str) -> Self {
        self.labels.push((name.into(), value.into()));
        self
    }
}

/// The samples of the scrape in progress; the registry encodes them with its own.
#[derive(Debug, Default)]
pub struct Snapshot(pub(crate) Mutex<Vec<Sample>>);

impl Collector for Snapshot {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let samples = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut start = 0;
        while start < samples.len() {
            let first = &samples[start];
            let end = start
                + samples[start..]
                    .iter()
                    .take_while(|s| s.name == first.name)
                    .count();
            let kind = if first.counter {
                MetricType::Counter
            } else {
                MetricType::Gauge
            };
            let mut metric = encoder.encode_descriptor(&first.name, &first.help, None, kind)?;
            for sample in &samples[start..end] {
                let family = metric.encode_family(&sample.labels)?;
                if sample.counter {
                    ConstCounter::new(sample.value).encode(family)?;
                } else {
                    ConstGauge::new(sample.value).encode(family)?;
                }
            }
            start = end;
        }
        Ok(())
    }
}
