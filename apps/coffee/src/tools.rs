use std::sync::Arc;

use concierge_core::{Annotations, CallContext, ToolError, ToolSet, typed_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::CoffeeConfig;
use crate::menu::{Drink, MenuFile};
use crate::orders::{OrderBook, OrderLine};

/// Most cups of one drink in one order; more is a typo or a catering request, not a bot order.
pub const MAX_QTY: u32 = 20;
/// Most lines in one order.
pub const MAX_LINES: usize = 30;

/// The time source; injected so order status is testable without waiting.
pub use concierge_core::SharedClock as Clock;

/// The real time.
pub fn system_clock() -> Clock {
    concierge_core::SystemClock::shared()
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArguments {}

#[derive(Serialize, JsonSchema)]
struct DrinkList {
    /// The drinks, in menu order.
    results: Vec<Drink>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchMenu {
    /// One keyword from the guest's wish: an ingredient ("арбуз", "кокос", "без лактозы") or part
    /// of a name. Russian, as on the menu.
    #[schemars(length(min = 1, max = 100))]
    query: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateOrder {
    /// The drinks ordered, one entry per drink.
    #[schemars(length(min = 1, max = MAX_LINES))]
    items: Vec<OrderItem>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct OrderItem {
    /// The drink's name exactly as on the menu (use get_menu or search_menu when unsure).
    drink: String,
    /// How many cups.
    #[schemars(range(min = 1, max = MAX_QTY))]
    qty: u32,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct OrderCreated {
    /// The order number to tell the guest.
    id: u64,
    /// Minutes until the whole order is ready.
    total_minutes: u32,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct GetOrderStatus {
    /// The order number create_order returned.
    #[schemars(range(min = 1))]
    order_id: u64,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct OrderStatus {
    /// "готовится" while the drinks are being made, "готов" when the order can be picked up.
    status: String,
    /// Whole minutes until ready; 0 when ready.
    minutes_left: u32,
    items: Vec<StatusItem>,
}

#[derive(Serialize, JsonSchema)]
struct StatusItem {
    drink: String,
    qty: u32,
}

struct Shop {
    menu: MenuFile,
    orders: OrderBook,
    clock: Clock,
}

/// Opens the menu and the order book and returns the shop's four tools.
pub fn build(config: &CoffeeConfig, clock: Clock) -> Result<ToolSet, String> {
    let menu = MenuFile::open(config.menu.clone()).map_err(|e| e.to_string())?;
    let orders = OrderBook::open(config.orders.clone()).map_err(|e| e.to_string())?;
    let shop = Arc::new(Shop {
        menu,
        orders,
        clock,
    });

    let get_menu = {
        let shop = shop.clone();
        typed_tool(
            "get_menu",
            "The whole menu: every drink with its price in roubles, preparation minutes and \
             composition. Use it when the guest asks what there is, or to check a drink's exact name \
             before ordering.",
            Annotations::read_only(),
            move |_: NoArguments, _: CallContext| {
                let shop = shop.clone();
                async move {
                    Ok(DrinkList {
                        results: shop.menu.get().drinks().to_vec(),
                    })
                }
            },
        )
    };

    let search_menu = {
        let shop = shop.clone();
        typed_tool(
            "search_menu",
            "Finds drinks whose name or composition contains a keyword, case-insensitively. The \
             composition is not in your context: use this when the guest names an ingredient or a \
             taste (\"something with watermelon\") rather than a drink. Returns {results: []} when \
             nothing matches.",
            Annotations::read_only(),
            move |input: SearchMenu, _: CallContext| {
                let shop = shop.clone();
                async move {
                    if input.query.trim().is_empty() {
                        return Err(ToolError::invalid(
                            "query",
                            "Пустой запрос: укажите ключевое слово, например «кокос».",
                        ));
                    }
                    let menu = shop.menu.get();
                    let results = menu.search(&input.query).into_iter().cloned().collect();
                    Ok(DrinkList { results })
                }
            },
        )
    };

    let create_order = {
        let shop = shop.clone();
        typed_tool(
            "create_order",
            "Places an order. Every drink must be named exactly as on the menu. Returns the order \
             number and the minutes until everything is ready (preparation minutes × quantity, \
             summed: one barista makes the drinks one after another). Call it once per order the \
             guest confirmed; each call creates a new order.",
            Annotations::additive_write(),
            move |input: CreateOrder, _: CallContext| {
                let shop = shop.clone();
                async move {
                    let lines = order_lines(&shop, &input)?;
                    let order = shop
                        .orders
                        .create(shop.clock.now(), lines)
                        .await
                        .map_err(|e| {
                            ToolError::internal("orders_unavailable", e.to_string()).with_message(
                                "Не удалось сохранить заказ, попробуйте ещё раз через минуту.",
                            )
                        })?;
                    Ok(OrderCreated {
                        id: order.id,
                        total_minutes: order.total_minutes(),
                    })
                }
            },
        )
    };

    let get_order_status = {
        let shop = shop.clone();
        typed_tool(
            "get_order_status",
            "The state of an order by its number: \"готовится\" or \"готов\", whole minutes left, \
             and the drinks in it.",
            Annotations::read_only(),
            move |input: GetOrderStatus, _: CallContext| {
                let shop = shop.clone();
                async move {
                    let order = shop.orders.get(input.order_id).ok_or_else(|| {
                        ToolError::not_found(format!(
                            "Заказ №{} не найден. Проверьте номер заказа.",
                            input.order_id
                        ))
                    })?;
                    let ready_at =
                        order.created + chrono::Duration::minutes(order.total_minutes() as i64);
                    let seconds_left = (ready_at - shop.clock.now()).num_seconds().max(0) as u64;
                    let minutes_left = seconds_left.div_ceil(60) as u32;
                    Ok(OrderStatus {
                        status: if minutes_left > 0 {
                            "готовится"
                        } else {
                            "готов"
                        }
                        .into(),
                        minutes_left,
                        items: order
                            .lines
                            .into_iter()
                            .map(|l| StatusItem {
                                drink: l.drink,
                                qty: l.qty,
                            })
                            .collect(),
                    })
                }
            },
        )
    };

    Ok(ToolSet::new(
        "coffee",
        &concierge_core::messages::RUSSIAN,
        vec![get_menu, search_menu, create_order, get_order_status],
    )
    .single_instance(
        "orders are rows of one .xlsx file that one process writes; serve the coffee shop from one instance",
    ))
}

/// Checks every line against the menu before anything is written.
fn order_lines(shop: &Shop, input: &CreateOrder) -> Result<Vec<OrderLine>, ToolError> {
    if input.items.is_empty() {
        return Err(ToolError::invalid(
            "items",
            "Заказ пуст: добавьте хотя бы один напиток.",
        ));
    }
    let menu = shop.menu.get();
    let mut lines = Vec::with_capacity(input.items.len());
    for (index, item) in input.items.iter().enumerate() {
        if !(1..=MAX_QTY).contains(&item.qty) {
            return Err(ToolError::invalid(
                format!("items[{index}].qty"),
                format!("Количество должно быть целым числом от 1 до {MAX_QTY}."),
            ));
        }
        let Some(drink) = menu.find(&item.drink) else {
            let close = menu.close_matches(&item.drink);
            let hint = if close.is_empty() {
                "Посмотрите меню (get_menu).".to_string()
            } else {
                format!("Возможно, имелось в виду: {}.", close.join(", "))
            };
            return Err(ToolError::invalid(
                format!("items[{index}].drink"),
                format!("Напитка «{}» нет в меню. {hint}", item.drink),
            ));
        };
        lines.push(OrderLine {
            drink: drink.drink.clone(),
            qty: item.qty,
            minutes: drink.minutes,
        });
    }
    Ok(lines)
}
