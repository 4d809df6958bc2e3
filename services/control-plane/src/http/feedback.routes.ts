import { jsonBody } from '@switchyard/http';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import type { FeedbackService } from '../domain/feedback.service.ts';
import { createFeedbackBody, feedbackResponse, updateFeedbackBody } from '../domain/feedback.schemas.ts';

/** `/feedback`, mounted under `/v2` behind API-key authentication: feedback on requests, by trace id. */
export function feedbackRouter(feedback: FeedbackService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  router.post(
    '/',
    {
      scope: 'feedback.write',
      summary:
        'Sends feedback on the requests of a trace id: one entry, or a list of them stored all or none.',
      query: 'none',
      body: createFeedbackBody,
      response: feedbackResponse,
    },
    async (req, res, _next, input) => {
      const body = input.body(req);
      const written = await feedback.create(requirePrincipal(req), Array.isArray(body) ? body : [body]);
      res.json({
        status: 'success',
        message: 'Feedback successfully saved',
        feedback_ids: written.map((entry) => entry.id),
      });
    },
  );
  router.put(
    '/:id',
    {
      scope: 'feedback.write',
      summary: "Changes a feedback's value, and its weight and metadata when given.",
      query: 'none',
      body: updateFeedbackBody,
      response: feedbackResponse,
    },
    async (req, res, _next, input) => {
      const updated = await feedback.update(requirePrincipal(req), req.params.id, input.body(req));
      res.json({ status: 'success', message: 'Feedback successfully updated', feedback_ids: [updated.id] });
    },
  );

  return router;
}
