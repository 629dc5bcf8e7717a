//! `RulesService`: the legal moves of a position, stateless.

use tonic::{Request, Response, Status};

use super::convert;
use super::error::Refusal;
use super::error::bad;
use super::pb;
use super::service::Api;
use super::validate::checked;
use crate::notation::fen::parse_fen;
use crate::rules::Position;

#[tonic::async_trait]
impl pb::rules_service_server::RulesService for Api {
    async fn legal_moves(
        &self,
        req: Request<pb::LegalMovesRequest>,
    ) -> Result<Response<pb::LegalMovesResponse>, Status> {
        self.role(&req)?;
        let r = checked(req)?;
        let variant = convert::variant(r.variant).map_err(bad)?;
        let pos = if r.fen.trim().is_empty() {
            Position::start(variant)
        } else {
            parse_fen(&r.fen, variant).map_err(|e| Refusal::Field(format!("fen: {e}")))?
        };
        Ok(Response::new(pb::LegalMovesResponse {
            moves: convert::legal_moves(&pos),
        }))
    }
}
